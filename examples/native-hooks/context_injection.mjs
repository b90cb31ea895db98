#!/usr/bin/env node
// The native twin of guest-examples/js/context-injection, as people write Claude Code command
// hooks today: reads the payload on stdin and, on UserPromptSubmit, answers with the context
// given as the first argument. `hookbox bench` runs it beside the sandboxed JavaScript guest.
//
//   node context_injection.mjs "Project ATLAS." < payload.json

const context = process.argv[2];
if (typeof context !== 'string' || context.trim() === '') {
  process.stderr.write('usage: context_injection.mjs CONTEXT < payload.json\n');
  process.exit(1);
}
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const payload = JSON.parse(input);
  if (payload.hook_event_name !== 'UserPromptSubmit') {
    return;
  }
  process.stdout.write(JSON.stringify({
    hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: context },
  }) + '\n');
});
