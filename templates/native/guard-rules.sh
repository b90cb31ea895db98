# The commands {{name}} refuses: one pattern a line, matched as plain text inside the command.
# Edit the list, then run `hookbox test` (and add a case to tests/ for each new pattern).
DENY='rm -rf /
git push --force
mkfs'
