// {{name}}: an audit of tool calls (PostToolUse, every tool): logs one line per call through the
// host's `log` (hookbox shows it with HOOKBOX_LOG=info, tagged with the rule) and says nothing to
// the agent. The sandbox grants no files: to keep a log file, mount a folder `rw` in the rule.
//
// Bindings come from hookbox's WIT (wit/hook.wit, world `hook`) when build.sh builds the
// component (`hookbox build-js`, or componentize-qjs): the `host` import is the module
// `hookbox:hook/host@0.1.0`, the `handler` export is this module's `handler` object. Records
// arrive with camelCase fields (`toolName`, `toolInput` as JSON text); `option<T>` is
// `undefined` (hookbox build-js) or `null` (componentize-qjs) when absent: test it with
// `== null`, true for both; returning from `handle` is `ok(response)`, throwing a string is
// `err(message)` (a failed hook: its rule's fail mode decides). QuickJS is ES2023 without web or
// Node APIs: no `console`, `fetch` or `process` (log with `log(level, message)` from the host).

import { log } from 'hookbox:hook/host@0.1.0';

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
    if (event.name === 'PostToolUse') {
      // JSON.stringify: a tool name with a newline in it cannot forge a second line.
      log('info', `{{name}}: ${JSON.stringify(event.toolName ?? 'unknown')} was called`);
    }
    return none();
  },
};
