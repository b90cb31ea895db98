// Tests of the client against a live `hookbox serve` (scripts/test-clients.sh starts one).
// HOOKBOX_URL, HOOKBOX_TENANT and HOOKBOX_TOKEN name it; the tenant serves the shell guard on
// PreToolUse (denies `rm -rf /`) and a context hook on UserPromptSubmit ("Project ATLAS.").

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { HookboxClient, HookboxError } from "../src/hookbox.js";

const url = process.env.HOOKBOX_URL;
const tenant = process.env.HOOKBOX_TENANT ?? "demo";
const token = process.env.HOOKBOX_TOKEN ?? "";

describe("a live hookbox serve", { skip: url ? false : "HOOKBOX_URL is not set: run scripts/test-clients.sh" }, () => {
  const hooks = new HookboxClient(url ?? "", token);

  it("denies a dangerous command", async () => {
    const v = await hooks.dispatch(tenant, "PreToolUse", {
      session_id: "ts-1",
      tool_name: "Bash",
      tool_input: { command: "rm -rf /" },
    });
    assert.equal(v.blocked, true);
    assert.equal(v.decision, "deny");
    assert.match(v.reason ?? "", /shell-guard/);
    // The lean answer (the default) carries the verdict, not the per-hook reports.
    assert.equal(v.raw.hooks, undefined);
    assert.equal(v.raw.hook_fired, undefined);
  });

  it("gives the full report on request", async () => {
    const v = await hooks.dispatch(
      tenant,
      "PreToolUse",
      { session_id: "ts-3", tool_name: "Bash", tool_input: { command: "rm -rf /" } },
      undefined,
      true,
    );
    assert.equal(v.decision, "deny");
    assert.equal(v.raw.hook_fired.outcome, "block");
    assert.equal(v.raw.hooks[0].handler_type, "wasm");
  });

  it("has no decision on a harmless command", async () => {
    const v = await hooks.dispatch(tenant, "PreToolUse", { tool_name: "Bash", tool_input: { command: "ls" } });
    assert.equal(v.blocked, false);
    assert.equal(v.decision, undefined);
  });

  it("adds the tenant's context to a prompt", async () => {
    const v = await hooks.dispatch(tenant, "UserPromptSubmit", { prompt: "What is left to do?" });
    assert.deepEqual(v.additionalContexts, ["Project ATLAS."]);
    assert.match(JSON.stringify(v.rendered), /user-prompt-submit-hook/);
  });

  it("answers Claude Code's http hook", async () => {
    const answer = await hooks.claudeCode(tenant, {
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "rm -rf /" },
      session_id: "ts-2",
    });
    assert.equal(answer.hookSpecificOutput.permissionDecision, "deny");
  });

  it("names the field of a bad request", async () => {
    await assert.rejects(hooks.dispatch(tenant, "PreToolUze"), (e: unknown) => {
      assert.ok(e instanceof HookboxError);
      assert.equal(e.status, 400);
      assert.equal(e.field, "event");
      return true;
    });
    await assert.rejects(hooks.dispatch(tenant, "PreToolUse", { tool_name: 3 }), (e: unknown) =>
      e instanceof HookboxError && e.field === "payload.tool_name");
  });

  it("finds no tenant with a wrong token", async () => {
    await assert.rejects(new HookboxClient(url ?? "", "not-the-token").dispatch(tenant, "Stop"), (e: unknown) =>
      e instanceof HookboxError && e.status === 404 && e.code === "not_found");
  });

  it("reports an unreachable server as status 0", async () => {
    await assert.rejects(new HookboxClient("http://127.0.0.1:9", token, 5_000).dispatch(tenant, "Stop"), (e: unknown) =>
      e instanceof HookboxError && e.status === 0);
  });
});
