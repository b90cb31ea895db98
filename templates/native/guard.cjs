#!/usr/bin/env node
// {{name}}: a guard on shell commands (PreToolUse, matcher Bash). Reads Claude Code's hook payload
// on stdin. When the command contains one of the patterns of rules.cjs, answers a deny with its
// reason (the agent shows the model the reason); otherwise prints nothing: no decision, so the
// agent's own permission flow applies.
//
// CommonJS, run as `node --preserve-symlinks-main`: hookbox may run this script from a sealed copy
// of its approved bytes (/proc/self/fd/N, no file extension, no folder beside it), which node
// must neither resolve to its real path nor read as an ES module. For the same reason the
// neighbour is loaded through CLAUDE_PLUGIN_ROOT, not __dirname.

const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const { denied } = require(join(process.env.CLAUDE_PLUGIN_ROOT, 'scripts', 'rules.cjs'));

const payload = JSON.parse(readFileSync(0, 'utf8'));
const command = payload.tool_input?.command;
const pattern = typeof command === 'string' ? denied(command) : undefined;
if (pattern !== undefined) {
  process.stdout.write(
    JSON.stringify({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: `{{name}}: \`${pattern}\` is not allowed here`,
      },
    }),
  );
}
