#!/usr/bin/env python3
"""{{name}}: context for every prompt (UserPromptSubmit).

Adds a line of its own to the conversation, ahead of the user's message, then the project's
CONTEXT.md when there is one (its first 4000 bytes; a symlink is not followed).
"""

import json
import os
import sys

LIMIT = 4000


def project_notes() -> str:
    path = os.path.join(os.environ.get("CLAUDE_PROJECT_DIR", "."), "CONTEXT.md")
    if os.path.islink(path) or not os.path.isfile(path):
        return ""
    with open(path, "rb") as f:
        return f.read(LIMIT).decode("utf-8", errors="replace")


def main() -> int:
    json.load(sys.stdin)  # the payload: the prompt is in ["prompt"]
    context = "{{name}}: run the project's tests before you say a change is done."
    notes = project_notes()
    if notes:
        context += "\n" + notes
    json.dump(
        {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}},
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
