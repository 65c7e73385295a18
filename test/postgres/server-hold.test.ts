/**
 * `npm test` stops the PostgreSQL server it started, and leaves one that was running before it
 * as it was (test/support/postgres-global-setup.ts, `scripts/postgres.sh start|release`): real
 * `vitest run`s of one PostgreSQL test (test/programs/pg-hold.fixture.ts) against a server on
 * a port and data directory of this file's own, never the shared one.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCRIPT, SERVER_START_TIMEOUT } from '../support/postgres-server.ts';

const root = resolve(import.meta.dirname, '../..');
let parent: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  parent = mkdtempSync(join(tmpdir(), 'mnemo-pg-hold-'));
  chmodSync(parent, 0o755); // the server runs as `postgres` when we are root
  env = { ...process.env, MNEMO_PG_PORT: String(await freePort()), MNEMO_PG_DIR: join(parent, 'data') };
  delete env['MNEMO_PG_URL'];
  delete env['MNEMO_PG_HOLDER'];
});

afterAll(() => {
  script('destroy');
  rmSync(parent, { recursive: true, force: true });
});

function script(command: string, extra: NodeJS.ProcessEnv = {}) {
  const run = spawnSync(SCRIPT, [command], { env: { ...env, ...extra }, encoding: 'utf8', timeout: SERVER_START_TIMEOUT });
  if (command !== 'status' && run.status !== 0) throw new Error(`postgres.sh ${command}: ${run.stderr}`);
  return run;
}

const running = () => script('status').status === 0;

/** `vitest run` of the fixture, as `npm test` runs the suite; its exit status. */
function testRun(): number | null {
  const run = spawnSync(process.execPath, [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'test/programs/pg-hold.vitest.config.ts'], {
    cwd: root,
    env,
    encoding: 'utf8',
    timeout: SERVER_START_TIMEOUT,
  });
  if (run.status !== 0) throw new Error(`the inner test run failed:\n${run.stdout}\n${run.stderr}`);
  return run.status;
}

describe.sequential('the test run and the PostgreSQL server', () => {
  it('a server the run started is stopped at its end', () => {
    expect(running()).toBe(false);
    expect(testRun()).toBe(0);
    expect(existsSync(join(parent, 'data', 'PG_VERSION'))).toBe(true); // it did start one
    expect(running()).toBe(false);
  }, SERVER_START_TIMEOUT);

  it('a server that was running before the run is left running', () => {
    script('start');
    expect(testRun()).toBe(0);
    expect(running()).toBe(true);
    script('stop');
  }, SERVER_START_TIMEOUT);

  it('a server another live run holds stays up; the hold of a run that was killed does not count', async () => {
    const other = spawn('sleep', ['300']); // stands in for another test run
    try {
      script('start', { MNEMO_PG_HOLDER: String(other.pid) });
      expect(testRun()).toBe(0);
      expect(running()).toBe(true); // still held by the other run
    } finally {
      other.kill('SIGKILL');
      await new Promise((r) => other.once('exit', r));
    }
    // The other run died without its release: the next run's release finds no live holder.
    expect(testRun()).toBe(0);
    expect(running()).toBe(false);
  }, SERVER_START_TIMEOUT);
});

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}
