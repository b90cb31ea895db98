// {{name}}: a Stop hook. When the model ends its turn with an empty answer, keeps the turn going
// once: the follow-up becomes the next user message. A turn that already continues because of a
// Stop hook (stopHookActive) is left to end, so it cannot loop; an agent that does not send the
// last message is left alone.
//
// Bindings come from hookbox's WIT (wit/hook.wit, world `hook`) when build.sh builds the
// component (`hookbox build-js`, or componentize-qjs): the `host` import is the module
// `hookbox:hook/host@0.1.0`, the `handler` export is this module's `handler` object. Records
// arrive with camelCase fields (`toolName`, `toolInput` as JSON text); `option<T>` is
// `undefined` (hookbox build-js) or `null` (componentize-qjs) when absent: test it with
// `== null`, true for both; returning from `handle` is `ok(response)`, throwing a string is
// `err(message)` (a failed hook: its rule's fail mode decides). QuickJS is ES2023 without web or
// Node APIs: no `console`, `fetch` or `process` (log with `log(level, message)` from the host).

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
    const message = event.lastAssistantMessage;
    if (event.name !== 'Stop' || event.stopHookActive || message == null || message.trim() !== '') {
      return none();
    }
    return {
      ...none(),
      followUp: 'Your last answer was empty: give your final answer now, based on what you found.',
    };
  },
};
