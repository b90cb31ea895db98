// Builds src/hook.js into hooks/{{snake}}.wasm, a component of hookbox's `hook` world (wit/).
//
// The componentize API, not the `jco componentize` CLI (jco 1.35's CLI fails to read a WIT
// folder). `disableFeatures` drops the engine's HTTP support (`wasi:http`, which hookbox refuses at
// load: hooks have no network) and the fetch-event entry point; stdio stays so `console.error`
// reaches the host's captured stderr.

import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { componentize } from '@bytecodealliance/componentize-js';

const here = dirname(fileURLToPath(import.meta.url));
const output = resolve(here, 'hooks/{{snake}}.wasm');

const { component } = await componentize({
  sourcePath: resolve(here, 'src/hook.js'),
  witPath: resolve(here, 'wit'),
  worldName: 'hook',
  disableFeatures: ['http', 'fetch-event'],
});
await mkdir(dirname(output), { recursive: true });
await writeFile(output, component);
console.error(`built hooks/{{snake}}.wasm (${component.byteLength} bytes)`);
