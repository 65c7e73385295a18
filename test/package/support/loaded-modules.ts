/**
 * Which files a fresh Node process really loads for a script: a child process (under tsx, so the
 * sources run as they are) registers loaded-modules-hooks.mjs before anything else, runs the
 * script, then answers every file the ES module loader resolved plus every file in CommonJS's
 * `require.cache` (a CommonJS package's own `require`s never reach the ES loader). Real
 * behaviour, not a reading of the sources: a static import, a dynamic one or a `require` all count.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HOOKS = new URL('./loaded-modules-hooks.mjs', import.meta.url).href;
/** The repository's root, where the child runs. */
export const REPO_ROOT: string = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * Runs `body` (an ES module body; top-level await allowed; `entry(rel)` gives the file URL of a
 * repository path) in a fresh child process and answers the absolute paths of the files loaded.
 */
export function loadedFiles(body: string): string[] {
  const script = `
import { register, createRequire } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
const urls = new Set();
port1.on('message', (url) => urls.add(url));
port1.unref();
register(${JSON.stringify(HOOKS)}, { data: { port: port2 }, transferList: [port2] });
const entry = (rel) => new URL(rel, ${JSON.stringify(pathToFileURL(REPO_ROOT + '/').href)}).href;
${body}
// The hooks run on their own thread: let their last messages arrive.
await new Promise((resolve) => setTimeout(resolve, 100));
const files = new Set([...urls].filter((u) => u.startsWith('file:')).map((u) => decodeURIComponent(new URL(u).pathname)));
for (const file of Object.keys(createRequire(import.meta.url).cache)) files.add(file);
process.stdout.write(JSON.stringify([...files]));
process.exit(0);
`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(out) as string[];
}

/** The npm package a file belongs to (its innermost node_modules folder), or undefined for Mnemo's own. */
export function packageOf(file: string): string | undefined {
  const m = /.*node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  return m?.[1];
}
