"""Tests of hookbox_client against a live `hookbox serve` (scripts/test-clients.sh starts one).

HOOKBOX_URL, HOOKBOX_TENANT and HOOKBOX_TOKEN name it; the tenant serves the shell guard on
PreToolUse (which denies `rm -rf /`) and a context hook on UserPromptSubmit (config.context
"Project ATLAS.").
"""

import os
import unittest

from hookbox_client import HookboxClient, HookboxError

URL = os.environ.get("HOOKBOX_URL")
TENANT = os.environ.get("HOOKBOX_TENANT", "demo")
TOKEN = os.environ.get("HOOKBOX_TOKEN", "")


@unittest.skipUnless(URL, "HOOKBOX_URL is not set: run scripts/test-clients.sh")
class LiveServer(unittest.TestCase):
    def setUp(self):
        self.hooks = HookboxClient(URL, TOKEN)

    def test_a_dangerous_command_is_denied(self):
        v = self.hooks.dispatch(TENANT, "PreToolUse", {
            "session_id": "py-1", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"},
        })
        self.assertTrue(v.blocked)
        self.assertEqual(v.decision, "deny")
        self.assertIn("shell-guard", v.reason)
        # The lean answer (the default) carries the verdict, not the per-hook reports.
        self.assertNotIn("hooks", v.raw)
        self.assertNotIn("hook_fired", v.raw)

    def test_the_full_report_on_request(self):
        v = self.hooks.dispatch(TENANT, "PreToolUse", {
            "session_id": "py-3", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"},
        }, full_report=True)
        self.assertEqual(v.decision, "deny")
        self.assertEqual(v.raw["hook_fired"]["outcome"], "block")
        self.assertEqual(v.raw["hooks"][0]["handler_type"], "wasm")

    def test_a_harmless_command_has_no_decision(self):
        v = self.hooks.dispatch(TENANT, "PreToolUse", {
            "tool_name": "Bash", "tool_input": {"command": "ls -la"},
        })
        self.assertFalse(v.blocked)
        self.assertIsNone(v.decision)

    def test_a_prompt_gets_the_tenants_context(self):
        v = self.hooks.dispatch(TENANT, "UserPromptSubmit", {"prompt": "What is left to do?"})
        self.assertEqual(v.additional_contexts, ["Project ATLAS."])
        self.assertEqual(v.rendered["kind"], "proceed")
        self.assertIn("<user-prompt-submit-hook>", v.rendered["text"])

    def test_agentao_envelopes_are_read_too(self):
        v = self.hooks.dispatch(TENANT, "PreToolUse", {
            "event": "PreToolUse",
            "data": {"toolName": "run_shell_command", "toolInput": {"command": "rm -rf /"}},
        })
        self.assertEqual(v.decision, "deny")

    def test_the_claude_code_answer(self):
        answer = self.hooks.claude_code(TENANT, {
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "rm -rf /"}, "session_id": "py-2",
        })
        self.assertEqual(answer["hookSpecificOutput"]["permissionDecision"], "deny")

    def test_errors_name_the_field(self):
        with self.assertRaises(HookboxError) as e:
            self.hooks.dispatch(TENANT, "PreToolUze", {})
        self.assertEqual((e.exception.status, e.exception.field), (400, "event"))
        with self.assertRaises(HookboxError) as e:
            self.hooks.dispatch(TENANT, "PreToolUse", {"tool_name": 3})
        self.assertEqual(e.exception.field, "payload.tool_name")

    def test_a_wrong_token_finds_no_tenant(self):
        with self.assertRaises(HookboxError) as e:
            HookboxClient(URL, "not-the-token").dispatch(TENANT, "Stop", {})
        self.assertEqual((e.exception.status, e.exception.code), (404, "not_found"))

    def test_an_unreachable_server_is_status_0(self):
        with self.assertRaises(HookboxError) as e:
            HookboxClient("http://127.0.0.1:9", TOKEN, timeout=5).dispatch(TENANT, "Stop", {})
        self.assertEqual(e.exception.status, 0)


if __name__ == "__main__":
    unittest.main()
