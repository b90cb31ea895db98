// Builds `context-injection.js` into a WebAssembly component for hookbox's `hook` world.
//
// Usage: node context-injection/build.mjs [OUTPUT.wasm]   (default: dist/context_injection_js.wasm)
//
// The componentize API, not the `jco componentize` CLI: jco 1.35's CLI fails to read a WIT
// folder path. The WIT is read from the repository's `wit/` (the single source, never copied).
// `disableFeatures` drops the engine's HTTP support (`wasi:http`, which hookbox refuses at load:
// hooks have no network) and the fetch-event entry point; stdio stays so `console.error` reaches
// the host's captured stderr, and clocks and random stay because the host grants them and
// `Date.now()`/`Math.random()` should work.

import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { componentize } from '@bytecodealliance/componentize-js';

const here = dirname(fileURLToPath(import.meta.url));
const output = resolve(process.argv[2] ?? resolve(here, '../dist/context_injection_js.wasm'));

const started = performance.now();
const { component } = await componentize({
  sourcePath: resolve(here, 'context-injection.js'),
  witPath: resolve(here, '../../../wit'),
  worldName: 'hook',
  disableFeatures: ['http', 'fetch-event'],
});
await mkdir(dirname(output), { recursive: true });
await writeFile(output, component);
const seconds = ((performance.now() - started) / 1000).toFixed(1);
console.error(`built ${output} (${component.byteLength} bytes) in ${seconds} s`);
