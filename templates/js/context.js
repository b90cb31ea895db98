// {{name}}: context for every prompt (UserPromptSubmit): adds the rule's config.context to the
// conversation, ahead of the user's message. The text lives in hooks/hooks.json, so changing it
// needs no rebuild.
//
// Bindings come from hookbox's WIT (wit/hook.wit, world `hook`) when build.sh builds the
// component (`hookbox build-js`, or componentize-qjs): the `host` import is the module
// `hookbox:hook/host@0.1.0`, the `handler` export is this module's `handler` object. Records
// arrive with camelCase fields (`toolName`, `toolInput` as JSON text); `option<T>` is
// `undefined` (hookbox build-js) or `null` (componentize-qjs) when absent: test it with
// `== null`, true for both; returning from `handle` is `ok(response)`, throwing a string is
// `err(message)` (a failed hook: its rule's fail mode decides). QuickJS is ES2023 without web or
// Node APIs: no `console`, `fetch` or `process` (log with `log(level, message)` from the host).

import { config } from 'hookbox:hook/host@0.1.0';

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
    if (event.name !== 'UserPromptSubmit') {
      return none();
    }
    const context = JSON.parse(config())?.context;
    // A rule that adds nothing is misconfigured: say so (a failed hook) instead of passing.
    if (typeof context !== 'string' || context.trim() === '') {
      throw 'config.context is missing or empty';
    }
    return { ...none(), additionalContexts: [context] };
  },
};
