#!/usr/bin/env node
// {{name}}: a Stop hook. When the model ends its turn with an empty answer, keeps the turn going
// once (`decision: block` with a reason: the reason becomes the next user message). A turn that
// already continues because of a Stop hook (stop_hook_active) is left to end, so it cannot loop;
// a payload without last_assistant_message (an agent that does not send it) is left alone.
//
// CommonJS, run as `node --preserve-symlinks-main`: hookbox may run this script from a sealed copy
// of its approved bytes (/proc/self/fd/N, no file extension), which node must neither resolve to
// its real path nor read as an ES module.

const { readFileSync } = require('node:fs');

const payload = JSON.parse(readFileSync(0, 'utf8'));
const message = payload.last_assistant_message;
if (!payload.stop_hook_active && typeof message === 'string' && message.trim() === '') {
  process.stdout.write(
    JSON.stringify({
      decision: 'block',
      reason: 'Your last answer was empty: give your final answer now, based on what you found.',
    }),
  );
}
