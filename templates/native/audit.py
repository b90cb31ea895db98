#!/usr/bin/env python3
"""{{name}}: an audit of tool calls (PostToolUse, every tool).

Appends one line per call — the time and the tool's name — to audit.log in the plugin's data
folder (CLAUDE_PLUGIN_DATA: kept by hookbox outside the project, per plugin). Says nothing to the
agent.
"""

import json
import os
import sys
import time


def main() -> int:
    payload = json.load(sys.stdin)
    tool = payload.get("tool_name")
    tool = tool if isinstance(tool, str) else "unknown"
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    # json.dumps: a tool name with a newline in it cannot forge a second line.
    line = f"{stamp} {json.dumps(tool)}\n"
    with open(os.path.join(os.environ["CLAUDE_PLUGIN_DATA"], "audit.log"), "a") as f:
        f.write(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
