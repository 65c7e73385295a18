#!/usr/bin/env node
// `npm run build` (and `prepack`): the package's dist/.
//   dist/esm  the ES module build of src/ (and supervisors/, which src imports): tsc compiles
//             (comments stripped, source maps), then esbuild bundles the compiled files into
//             the public entries, the CLI and the search worker, their shared code in chunks
//             beside the root entry (dist/esm/src/chunk-*.js), xstate inlined (its ES build) and
//             the other packages left to Node. A fresh `import('mnemo')` then reads ~20 files, not
//             ~250 (Node's loader costs per file: docs/performance-history.md). Shared chunks
//             keep one copy of each class across the entries; dynamic `import()`s stay lazy.
//             Beside them the .d.ts with their documentation and declaration maps (tsc) and the
//             chat page's static files.
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
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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

await bundle(join(dist, 'esm'));

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

/**
 * Bundles tsc's JavaScript in `esm` in place: the public entries plus the files loaded by path
 * (the CLI from bin/, the search worker from module-location.ts's `packageFile`) stay where tsc
 * put them, every other .js goes. The shared chunks sit in src/, beside module-location's
 * compiled place, so its `import.meta.url` paths (the worker, the chat page) still hold.
 */
async function bundle(esm) {
  const { build } = await import('esbuild');
  const entries = [...Object.values(ENTRIES), 'src/cli/main', 'src/recall/storage/lmdb/pool/search-worker'];
  // Each other entry also imports the root entry: esbuild makes a chunk per set of entries
  // that share code, and with ten entries the root's code fell into ~50 of them. Reached from
  // every entry, it is one chunk (the others load it whole: one file, few ms).
  const rootFile = join(esm, `${ENTRIES.index}.js`);
  const entryPoints = entries.map((e) => ({ in: e === ENTRIES.index ? rootFile : `entry:${join(esm, `${e}.js`)}`, out: e }));
  const result = await build({
    entryPoints,
    outdir: esm,
    chunkNames: 'src/chunk-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // No keepNames: it adds a `__name(...)` call per function and per closure, run at import and
    // at each closure's creation (docs/performance-history.md). Unminified, a function keeps its
    // name unless bundling renames it for a clash; classes, whose names errors carry
    // (`new.target.name`), are given theirs back and checked (`withClassNames`).
    sourcemap: true,
    sourcesContent: false,
    metafile: true,
    write: false,
    // xstate is found from this checkout's node_modules wherever --out puts the build.
    nodePaths: [join(root, 'node_modules')],
    logLevel: 'warning',
    plugins: [
      {
        name: 'entries',
        setup(b) {
          b.onResolve({ filter: /^entry:/ }, (args) => ({ path: args.path.slice('entry:'.length), namespace: 'entry' }));
          b.onLoad({ filter: /.*/, namespace: 'entry' }, (args) => ({
            // The search worker's job function is its default export (piscina calls it).
            contents: `import ${JSON.stringify(rootFile)};\nexport * from ${JSON.stringify(args.path)};\n${args.path.endsWith('search-worker.js') ? `export { default } from ${JSON.stringify(args.path)};\n` : ''}`,
            resolveDir: dirname(args.path),
          }));
        },
      },
      {
        // Packages stay Node's to load, but xstate: its ES build, inlined (Node resolves `xstate`
        // to its CommonJS build, ~30 ms of a cold import).
        name: 'externals',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) => (args.path === 'xstate' || args.path.startsWith('xstate/') || args.path.startsWith('node:') ? undefined : { path: args.path, external: true }));
        },
      },
    ],
  });
  const located = Object.entries(result.metafile.outputs).find(([, o]) => Object.keys(o.inputs).some((i) => i.endsWith('src/module-location.js')));
  if (located === undefined || dirname(resolve(located[0])) !== join(esm, 'src')) fail(`module-location.js was bundled into ${located?.[0]}, not beside the root entry`);
  const outputs = result.outputFiles.map((o) => ({ path: o.path, text: o.path.endsWith('.js') ? withClassNames(o.text) : o.text }));
  const renamed = renamedClasses(result.metafile, outputs);
  if (renamed.length > 0) fail(`bundling renamed classes (error names come from class names): ${renamed.join(', ')}`);
  for (const file of walk(esm)) if (file.endsWith('.js') || file.endsWith('.js.map')) rmSync(file);
  for (const out of outputs) {
    mkdirSync(dirname(out.path), { recursive: true });
    writeFileSync(out.path, out.text);
  }
}

/**
 * Gives each class esbuild declared as `var X = class _X` (a class that refers to itself: its
 * name is then `'_X'`) its name `X` back, in one line before the source map comment (the mapped
 * lines stay where they are).
 */
function withClassNames(code) {
  const names = [...code.matchAll(/\bvar ([A-Za-z_$][\w$]*) = class _\1\b/g)].map((m) => m[1]);
  if (names.length === 0) return code;
  const fix = names.map((n) => `Object.defineProperty(${n}, "name", { value: "${n}", configurable: true });`).join(' ');
  const at = code.lastIndexOf('\n//# sourceMappingURL=');
  return at < 0 ? `${code}\n${fix}\n` : `${code.slice(0, at)}\n${fix}${code.slice(at)}`;
}

/** The classes the bundle names otherwise than their source (a clash renamed, or `_X` not given back). */
function renamedClasses(metafile, outputs) {
  const declared = (code) => [...code.matchAll(/\bclass\s+([A-Za-z_$][\w$]*)/g)].map((m) => m[1]).filter((n) => n !== 'extends');
  const inputs = new Set(Object.keys(metafile.inputs).flatMap((file) => (existsSync(resolve(file)) ? declared(readFileSync(resolve(file), 'utf8')) : [])));
  return outputs.filter((o) => o.path.endsWith('.js')).flatMap((o) => {
    const given = new Set([...o.text.matchAll(/Object\.defineProperty\(([\w$]+), "name"/g)].map((m) => `_${m[1]}`));
    return declared(o.text).filter((n) => !inputs.has(n) && !given.has(n));
  });
}

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}
