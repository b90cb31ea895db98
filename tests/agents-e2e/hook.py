"""The test plugins' one hook: `hook.py MODE` reads the Claude Code payload hookbox hands it and
answers as MODE says (Claude Code's hook output), whatever agent is in front of hookbox. Every
payload is appended to `seen.jsonl` beside this file, for the report of a failed case."""

import json
import os
import sys
import time

mode = sys.argv[1]
payload = json.load(sys.stdin)
here = os.path.dirname(os.path.abspath(__file__))
try:
    with open(os.path.join(here, "seen.jsonl"), "a") as f:
        f.write(json.dumps({"mode": mode, "payload": payload}) + "\n")
except OSError:
    pass

event = payload.get("hook_event_name")
command = (payload.get("tool_input") or {}).get("command") or ""


def pre(**fields):
    fields["hookEventName"] = "PreToolUse"
    return {"hookSpecificOutput": fields}


answer = {}
if mode == "deny" and "victim" in command:
    answer = pre(permissionDecision="deny", permissionDecisionReason="e2e-deny-reason: the victim stays")
elif mode == "deny-listed":
    # The words to refuse come from a file beside this script, found through its own path.
    with open(os.path.join(here, "deny-words.txt")) as f:
        if any(w in command for w in f.read().split()):
            answer = pre(permissionDecision="deny", permissionDecisionReason="e2e-deny-reason: a listed word")
elif mode == "allow":
    answer = pre(permissionDecision="allow", permissionDecisionReason="e2e-allow-reason")
elif mode == "ask":
    answer = pre(permissionDecision="ask", permissionDecisionReason="e2e-ask-reason: confirm this")
elif mode == "rewrite" and "original" in command:
    answer = pre(permissionDecision="allow", updatedInput={"command": command.replace("original", "rewritten")})
elif mode == "context-pre":
    answer = pre(additionalContext="e2e-context-pre")
elif mode == "context-post":
    answer = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "e2e-context-post"}}
elif mode == "context-prompt":
    answer = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "e2e-context-prompt"}}
elif mode == "block-prompt":
    answer = {"decision": "block", "reason": "e2e-prompt-blocked"}
elif mode == "stop-continue":
    answer = {"decision": "block", "reason": "e2e-keep-going: one more round"}
elif mode == "stop-agent" and "victim" in command:
    answer = {"continue": False, "stopReason": "e2e-stopped"}
elif mode == "hang":
    time.sleep(30)
print(json.dumps(answer))
