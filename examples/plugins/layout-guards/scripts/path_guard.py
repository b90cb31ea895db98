"""A PreToolUse guard for Write and Edit: refuses writes to protected files, listed in the
neighbour module `protected.py` (imported as python finds it: beside the script)."""
import json
import sys

from protected import why_protected

payload = json.load(sys.stdin)
path = (payload.get("tool_input") or {}).get("file_path", "")
why = why_protected(path)
if why:
    print(f"layout-guards: refused a write to {path} — {why}", file=sys.stderr)
    sys.exit(2)
