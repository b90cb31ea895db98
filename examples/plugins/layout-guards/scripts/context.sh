#!/usr/bin/env bash
# UserPromptSubmit: adds the team's conventions to the prompt's context. The text lives in
# lib.sh beside this script, found through $0 as bash plugins do.
set -eu
. "$(dirname "$0")/lib.sh"
cat >/dev/null
printf '%s\n' "$CONVENTIONS"
