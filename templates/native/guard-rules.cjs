// The commands {{name}} refuses: patterns matched as plain text inside the command.
// Edit the list, then run `hookbox test` (and add a case to tests/ for each new pattern).

const DENY = ['rm -rf /', 'git push --force', 'mkfs'];

/** The first pattern `command` contains, or undefined. */
function denied(command) {
  return DENY.find((p) => command.includes(p));
}

module.exports = { DENY, denied };
