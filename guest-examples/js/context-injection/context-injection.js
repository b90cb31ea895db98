// Per-turn project context (recipe 1) in JavaScript: on every `UserPromptSubmit`, adds the rule's
// `config.context` to the conversation. The same decision as the Rust `context-injection` guest.
//
// Bindings come from hookbox's WIT (`wit/hook.wit`, world `hook`) when componentize-js builds the
// component (`build.mjs`): the `host` import is the module `hookbox:hook/host@0.1.0`, the
// `handler` export is this module's `handler` object. Records arrive with camelCase fields
// (`toolName`, `additionalContexts`); `option<T>` is `undefined` when absent; returning from
// `handle` is `ok(response)`, throwing a string is `err(message)` (a failed hook, class `trap`).

import { config, log } from 'hookbox:hook/host@0.1.0';

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

/** The rule's `config.context`; a rule that injects nothing is misconfigured, so say so. */
function contextFromConfig() {
  let parsed;
  try {
    parsed = JSON.parse(config());
  } catch (e) {
    throw `config is not JSON: ${e}`;
  }
  const context = parsed?.context;
  if (typeof context !== 'string') {
    throw 'config.context is missing or not a string';
  }
  if (context.trim() === '') {
    throw 'config.context is empty';
  }
  return context;
}

export const handler = {
  handle(event) {
    if (event.name !== 'UserPromptSubmit') {
      return none();
    }
    const context = contextFromConfig();
    log('debug', `context-injection (js): adding ${context.length} characters`);
    return { ...none(), additionalContexts: [context] };
  },
};
