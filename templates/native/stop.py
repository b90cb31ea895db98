#!/usr/bin/env python3
"""{{name}}: a Stop hook.

When the model ends its turn with an empty answer, keeps the turn going once (`decision: block`
with a reason: the reason becomes the next user message). A turn that already continues because
of a Stop hook (stop_hook_active) is left to end, so it cannot loop; a payload without
last_assistant_message (an agent that does not send it) is left alone.
"""

import json
import sys


def main() -> int:
    payload = json.load(sys.stdin)
    if payload.get("stop_hook_active"):
        return 0
    message = payload.get("last_assistant_message")
    if isinstance(message, str) and not message.strip():
        json.dump(
            {
                "decision": "block",
                "reason": "Your last answer was empty: give your final answer now, based on what you found.",
            },
            sys.stdout,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
