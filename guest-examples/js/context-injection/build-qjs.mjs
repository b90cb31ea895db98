// Builds `context-injection.js` — the same source `build.mjs` gives componentize-js — into a
// component of hookbox's `hook` world with componentize-qjs (QuickJS, pre-initialised by Wizer).
//
// Usage: node context-injection/build-qjs.mjs [OUTPUT.wasm]
//        (default: dist/context_injection_cqjs.wasm)
//
// `sync: true`: the non-async runtime. componentize-qjs's default embeds component-model async,
// which hookbox does not run (hooks are one synchronous call). Its other size option
// (`optSize`) emits tail calls, which hookbox refuses at load (SECURITY.md, "WebAssembly
// proposals"). The WIT is the repository's `wit/`, never copied.

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { componentize } from 'componentize-qjs';

const here = dirname(fileURLToPath(import.meta.url));
const output = resolve(process.argv[2] ?? resolve(here, '../dist/context_injection_cqjs.wasm'));
const source = resolve(here, 'context-injection.js');

const started = performance.now();
const { component } = await componentize({
  witPath: resolve(here, '../../../wit'),
  world: 'hook',
  jsSource: await readFile(source, 'utf8'),
  jsPath: source,
  sync: true,
});
await mkdir(dirname(output), { recursive: true });
await writeFile(output, component);
const seconds = ((performance.now() - started) / 1000).toFixed(1);
console.error(`built ${output} (${component.byteLength} bytes) in ${seconds} s`);
