// Builds src/hook.js into hooks/{{snake}}.wasm, a component of hookbox's `hook` world (wit/), with
// componentize-qjs: QuickJS with the module evaluated once at build time (Wizer), so every event
// starts from that snapshot. ~1.6 MB, built in about a second.
//
// `sync: true`: the non-async runtime (hookbox runs a hook as one synchronous call; the default
// runtime needs component-model async). `optSize` is not used: it emits tail calls, which hookbox
// refuses at load. Module top-level code runs at build time, with no host: call `config()` and
// `log()` inside `handle`.

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { componentize } from 'componentize-qjs';

const here = dirname(fileURLToPath(import.meta.url));
const source = resolve(here, 'src/hook.js');
const output = resolve(here, 'hooks/{{snake}}.wasm');

const { component } = await componentize({
  witPath: resolve(here, 'wit'),
  world: 'hook',
  jsSource: await readFile(source, 'utf8'),
  jsPath: source,
  sync: true,
});
await mkdir(dirname(output), { recursive: true });
await writeFile(output, component);
console.error(`built hooks/{{snake}}.wasm (${component.byteLength} bytes)`);
