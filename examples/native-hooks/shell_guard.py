#!/usr/bin/env python3
"""The native twin of guest-examples/python/shell-guard, as people write Claude Code command hooks
today: reads the payload on stdin and denies what the guest's own `rules.check` objects to (the
same module, imported from beside this file or from the guest's folder). `hookbox bench` runs it
beside the sandboxed Python guest.

    python3 shell_guard.py < payload.json
"""

import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(1, os.path.join(here, "..", "..", "guest-examples", "python", "shell-guard"))

import rules  # noqa: E402  (found through the path set above)


def main():
    payload = json.load(sys.stdin)
    if payload.get("hook_event_name") != "PreToolUse":
        return
    command = (payload.get("tool_input") or {}).get("command")
    if not isinstance(command, str):
        return
    reason = rules.check(command, ())
    if reason is None:
        return
    json.dump(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": f"shell-guard: the command {reason}",
            }
        },
        sys.stdout,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
