/**
 * Many `mnemo serve --postgres` processes on one database, and a round-robin balancer in front
 * of them: what test/postgres/server-fleet.test.ts and bench/multi-process.ts run.
 *
 * - `startMnemo`: a real server process (`node --import tsx src/cli/main.ts serve`, no wrapper
 *   process, so a SIGKILL ends the process that writes), offline model, resolved once it listens.
 * - `roundRobin`: a loopback HTTP proxy sending each request to the next of `backends()` (read
 *   per request, so a caller can drop a dead server as a balancer's health check would); a
 *   backend that cannot be reached answers 502 `bad_gateway`. No session affinity. `inFlight(url)`:
 *   the requests it has sent to that backend and not yet seen answered (a test kills a server
 *   while it holds one).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = join(ROOT, 'src', 'cli', 'main.ts');
const TSX = pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

/** A running server. */
export interface RunningMnemo {
  child: ChildProcess;
  url: string;
  exited: Promise<unknown>;
  /** SIGKILL unless already gone; resolves once it has exited. */
  kill(): Promise<void>;
}

/** One `mnemo serve --postgres <databaseUrl> --pg-schema <schema> ...args`, in `cwd`. */
export function startMnemo(options: { databaseUrl: string; schema: string; cwd: string; args?: readonly string[] }): Promise<RunningMnemo> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('MNEMO_') && !k.startsWith('OPENAI_')) env[k] = v;
  const child = spawn(
    process.execPath,
    ['--import', TSX, MAIN, 'serve', '--port', '0', '--postgres', options.databaseUrl, '--pg-schema', options.schema, ...(options.args ?? [])],
    { cwd: options.cwd, env: { ...env, MNEMO_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const kill = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    let listening = false;
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      if (listening) return; // the request log, read and dropped
      out += d.toString();
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (m) {
        listening = true;
        resolve({ child, url: m[1]!, exited, kill });
      }
    });
    child.on('exit', (code) => reject(new Error(`mnemo exited (${code}) before listening:\n${err}\n${out}`)));
  });
}

/** A round-robin balancer over `backends()`; `close()` stops it. */
export function roundRobin(backends: () => readonly string[]): Promise<{ url: string; server: Server; inFlight(url: string): number; close(): Promise<void> }> {
  let next = 0;
  const sent = new Map<string, number>();
  const server = createServer((req, res) => {
    const list = backends();
    const backend = list[next++ % list.length]!;
    const target = new URL(backend);
    sent.set(backend, (sent.get(backend) ?? 0) + 1);
    res.on('close', () => sent.set(backend, sent.get(backend)! - 1));
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent: false }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    upstream.on('error', () => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":"bad_gateway"}');
    });
    req.pipe(upstream);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address() as { port: number };
      resolve({
        url: `http://127.0.0.1:${address.port}`,
        server,
        inFlight: (backend) => sent.get(backend) ?? 0,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    }),
  );
}
