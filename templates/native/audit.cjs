#!/usr/bin/env node
// {{name}}: an audit of tool calls (PostToolUse, every tool). Appends one line per call — the time
// and the tool's name — to audit.log in the plugin's data folder (CLAUDE_PLUGIN_DATA: kept by
// hookbox outside the project, per plugin). Says nothing to the agent.
//
// CommonJS, run as `node --preserve-symlinks-main`: hookbox may run this script from a sealed copy
// of its approved bytes (/proc/self/fd/N, no file extension), which node must neither resolve to
// its real path nor read as an ES module.

const { appendFileSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const payload = JSON.parse(readFileSync(0, 'utf8'));
const tool = typeof payload.tool_name === 'string' ? payload.tool_name : 'unknown';
// JSON.stringify: a tool name with a newline in it cannot forge a second line.
appendFileSync(
  join(process.env.CLAUDE_PLUGIN_DATA, 'audit.log'),
  `${new Date().toISOString()} ${JSON.stringify(tool)}\n`,
);
