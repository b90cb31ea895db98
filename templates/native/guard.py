#!/usr/bin/env python3
"""{{name}}: a guard on shell commands (PreToolUse, matcher Bash).

Reads Claude Code's hook payload on stdin. When the command contains one of the patterns of
rules.py, answers a deny with its reason (the agent shows the model the reason); otherwise prints
nothing: no decision, so the agent's own permission flow applies.

The neighbour is imported through CLAUDE_PLUGIN_ROOT, not __file__: hookbox may run this script
from a sealed copy of its approved bytes, which does not live beside rules.py.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.environ["CLAUDE_PLUGIN_ROOT"], "scripts"))
import rules  # noqa: E402  (found through CLAUDE_PLUGIN_ROOT above)


def main() -> int:
    payload = json.load(sys.stdin)
    command = (payload.get("tool_input") or {}).get("command")
    if not isinstance(command, str):
        return 0
    pattern = rules.denied(command)
    if pattern is None:
        return 0
    json.dump(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": f"{{name}}: `{pattern}` is not allowed here",
            }
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
