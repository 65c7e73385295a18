#!/usr/bin/env node
// `npm run build` (and `prepack`): the package's dist/.
//   dist/esm  tsc's ES module build of src/ (and supervisors/, which src imports): .js with
//             source maps (comments stripped), .d.ts with their documentation and declaration
//             maps, the chat page's static files.
//   dist/cjs  one CommonJS module per public entry (`.`, `./otp`, `./server`, `./postgres`,
//             `./testing`, `./langgraph`, `./mcp`, `./ai-sdk`) that
//             require()s the ES module build (Node loads ES modules from require() since 20.19
//             and 22.12), with a CommonJS-format .d.ts beside it. One build, so `import` and
//             `require` users share one copy of Mnemo: one MnemoError class, one set of
//             module-level state, and the tarball holds the code once.
// Plain Node, no TypeScript loader: it runs wherever `npm pack` runs.
//   node scripts/build.mjs [--out DIR]   DIR instead of ./dist (test/docs builds its own copy,
//                                        so it never reads a dist/ that `npm pack` is rewriting)
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outAt = process.argv.indexOf('--out');
const dist = outAt > 0 && process.argv[outAt + 1] !== undefined ? resolve(process.argv[outAt + 1]) : join(root, 'dist');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** Public entry → its module in the ES build (paths under dist/esm, without extension). */
const ENTRIES = { index: 'src/index', otp: 'src/otp/index', server: 'src/server/index', postgres: 'src/postgres', testing: 'src/testing', langgraph: 'src/langgraph/index', mcp: 'src/mcp/index', 'ai-sdk': 'src/ai-sdk/index' };

function fail(message) {
  console.error(`build: ${message}`);
  process.exit(1);
}

rmSync(dist, { recursive: true, force: true });
// Two passes: the JavaScript without comments (the tarball stays small; the source maps lead
// back to the sources' lines), the declarations with them (editors show the documentation).
for (const config of ['tsconfig.build.json', 'tsconfig.types.json']) {
  const r = spawnSync(process.execPath, [tsc, '-p', join(root, config), '--outDir', join(dist, 'esm')], { stdio: 'inherit' });
  if (r.status !== 0) fail(`tsc -p ${config} failed`);
}

cpSync(join(root, 'src', 'server', 'public'), join(dist, 'esm', 'src', 'server', 'public'), { recursive: true });

const cjs = join(dist, 'cjs');
mkdirSync(cjs, { recursive: true });
writeFileSync(join(cjs, 'package.json'), '{"type":"commonjs"}\n');
for (const [name, target] of Object.entries(ENTRIES)) {
  if (!existsSync(join(dist, 'esm', `${target}.js`))) fail(`dist/esm/${target}.js is missing`);
  const from = `../esm/${target}.js`;
  writeFileSync(
    join(cjs, `${name}.js`),
    `'use strict';\n// CommonJS entry: the ES module build, loaded by require() (see scripts/build.mjs).\nmodule.exports = require('${from}');\n`,
  );
  writeFileSync(join(cjs, `${name}.d.ts`), `export * from '${from}';\n`);
}
console.error(`build: ${join(dist, 'esm')} and ${cjs} written`);
