// {{name}}: a guard on shell commands (PreToolUse, matcher Bash). When the command contains one of
// the patterns of DENY, answers a deny with its reason (the agent shows the model the reason);
// otherwise no decision, so the agent's own permission flow applies.
//
// Bindings come from hookbox's WIT (wit/hook.wit, world `hook`) when build.sh builds the
// component (`hookbox build-js`, or componentize-qjs): the `host` import is the module
// `hookbox:hook/host@0.1.0`, the `handler` export is this module's `handler` object. Records
// arrive with camelCase fields (`toolName`, `toolInput` as JSON text); `option<T>` is
// `undefined` (hookbox build-js) or `null` (componentize-qjs) when absent: test it with
// `== null`, true for both; returning from `handle` is `ok(response)`, throwing a string is
// `err(message)` (a failed hook: its rule's fail mode decides). QuickJS is ES2023 without web or
// Node APIs: no `console`, `fetch` or `process` (log with `log(level, message)` from the host).

/** The commands {{name}} refuses: patterns matched as plain text inside the command. */
const DENY = ['rm -rf /', 'git push --force', 'mkfs'];

/** A response with nothing to add: every field of the WIT `response` record, empty. */
function none() {
  return {
    additionalContexts: [],
    blockReason: undefined,
    stopReason: undefined,
    permission: undefined,
    updatedInput: undefined,
    followUp: undefined,
    suppressOutput: false,
    systemMessage: undefined,
  };
}

export const handler = {
  handle(event) {
    if (event.name !== 'PreToolUse' || event.toolInput == null) {
      return none();
    }
    const command = JSON.parse(event.toolInput)?.command;
    const pattern = typeof command === 'string' ? DENY.find((p) => command.includes(p)) : undefined;
    if (pattern === undefined) {
      return none();
    }
    return {
      ...none(),
      permission: { decision: 'deny', reason: `{{name}}: \`${pattern}\` is not allowed here` },
    };
  },
};
