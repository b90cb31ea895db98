#!/bin/sh
# Recipe 2: a dangerous-shell guard. Reads Claude Code's PreToolUse payload on stdin and
# blocks (exit 2, reason on stderr) when the command matches the deny-list. Plain sh on purpose:
# no jq or python needed; it matches the JSON text of the command.
payload=$(cat)
deny() { echo "shell-guard: refused '$1' — $2" >&2; exit 2; }
case "$payload" in
  *'rm -rf /"'*|*'rm -rf / '*|*'rm -rf /*'*) deny "rm -rf /" "deletes the filesystem" ;;
  *'| sh'*|*'|sh'*|*'| bash'*|*'|bash'*) deny "curl | sh" "pipes downloaded code into a shell" ;;
  *'mkfs'*) deny "mkfs" "formats a disk" ;;
  *':(){ :|:& };:'*) deny "fork bomb" "exhausts processes" ;;
esac
exit 0
