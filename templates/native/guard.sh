#!/bin/sh
# {{name}}: a guard on shell commands (PreToolUse, matcher Bash). Reads Claude Code's hook payload
# on stdin; when the command contains one of the patterns in rules.sh, refuses the call — exit 2
# with the reason on stderr, which the agent shows the model — and otherwise says nothing (exit 0:
# no decision, the agent's own permission flow applies).
#
# Plain sh, no jq: the patterns are matched against the payload's JSON text. The neighbour is
# found through CLAUDE_PLUGIN_ROOT, not "$0": hookbox may run this script from a sealed copy of
# its approved bytes, which does not live beside rules.sh.
. "${CLAUDE_PLUGIN_ROOT:?hookbox sets CLAUDE_PLUGIN_ROOT}/scripts/rules.sh"

payload=$(cat)
denied=$(printf '%s\n' "$DENY" | while IFS= read -r pattern; do
  [ -n "$pattern" ] || continue
  case "$payload" in
    *"$pattern"*) printf '%s' "$pattern"; break ;;
  esac
done)
if [ -n "$denied" ]; then
  echo "{{name}}: \`$denied\` is not allowed here" >&2
  exit 2
fi
exit 0
