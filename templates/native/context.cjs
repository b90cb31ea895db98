#!/usr/bin/env node
// {{name}}: context for every prompt (UserPromptSubmit). Adds a line of its own to the
// conversation, ahead of the user's message, then the project's CONTEXT.md when there is one (its
// first 4000 bytes; a symlink is not followed).
//
// CommonJS, run as `node --preserve-symlinks-main`: hookbox may run this script from a sealed copy
// of its approved bytes (/proc/self/fd/N, no file extension), which node must neither resolve to
// its real path nor read as an ES module.

const { closeSync, lstatSync, openSync, readFileSync, readSync } = require('node:fs');
const { join } = require('node:path');

const LIMIT = 4000;

function projectNotes() {
  const path = join(process.env.CLAUDE_PROJECT_DIR ?? '.', 'CONTEXT.md');
  try {
    if (!lstatSync(path).isFile()) return '';
  } catch {
    return '';
  }
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(LIMIT);
    return buf.subarray(0, readSync(fd, buf, 0, LIMIT, 0)).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

JSON.parse(readFileSync(0, 'utf8')); // the payload: the prompt is in .prompt
let context = "{{name}}: run the project's tests before you say a change is done.";
const notes = projectNotes();
if (notes) context += `\n${notes}`;
process.stdout.write(
  JSON.stringify({
    hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: context },
  }),
);
