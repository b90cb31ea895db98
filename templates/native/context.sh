#!/bin/sh
# {{name}}: context for every prompt (UserPromptSubmit). What this prints on stdout (exit 0) is
# added to the conversation ahead of the user's message: a line of its own, then the project's
# CONTEXT.md when there is one (its first 4000 bytes; a symlink is not followed).
echo "{{name}}: run the project's tests before you say a change is done."
notes="${CLAUDE_PROJECT_DIR:-.}/CONTEXT.md"
if [ -f "$notes" ] && [ ! -L "$notes" ]; then
  head -c 4000 "$notes"
fi
exit 0
