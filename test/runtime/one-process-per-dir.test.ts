import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { OWNER_FILE } from '../../src/memory/lmdb/data-dir-lock.ts';
import { startRuntime } from '../../src/runtime.ts';

// One LMDB data directory serves one process: a second process on it is refused at start with
// `data_dir_locked`, naming the holder's pid and pointing to PostgreSQL, never a crash or a
// `write_conflict` later. A holder that died (SIGKILL) does not keep the directory, nor does a
// record a killed writer cut short.

const holder = join(import.meta.dirname, '../programs/data-dir-holder.ts');
const dir = mkdtempSync(join(tmpdir(), 'mnemo-one-proc-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface Outcome {
  line: string;
  code: number | string;
}

function start(): { child: ChildProcess; firstLine: Promise<string>; exited: Promise<number | string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', holder, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.setEncoding('utf8');
  const firstLine = new Promise<string>((resolve) => {
    child.stdout!.on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
    child.on('exit', () => resolve(out));
  });
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
  return { child, firstLine, exited };
}

async function runToEnd(): Promise<Outcome> {
  const p = start();
  return { line: await p.firstLine, code: await p.exited };
}

it('refuses a second process on a data directory with data_dir_locked naming the holder, and lets a later one in once the holder was killed', async () => {
  const first = start();
  expect(await first.firstLine).toBe(`ready ${first.child.pid}`);

  const second = await runToEnd();
  expect(second.code).toBe(3);
  expect(second.line.startsWith('refused ')).toBe(true);
  const error = JSON.parse(second.line.slice('refused '.length)) as { code: string; message: string; details: { pid: number } };
  expect(error.code).toBe('data_dir_locked');
  expect(error.details.pid).toBe(first.child.pid);
  expect(error.message).toContain(`process ${first.child.pid}`);
  expect(error.message).toContain('PostgreSQL');

  first.child.kill('SIGKILL');
  await first.exited;

  const third = start();
  expect(await third.firstLine).toBe(`ready ${third.child.pid}`);
  third.child.kill('SIGTERM');
  await third.exited;
});

it('refuses a runtime in this process while another process holds the directory, and takes it after that process stopped', async () => {
  const other = start();
  expect(await other.firstLine).toBe(`ready ${other.child.pid}`);
  await expect(startRuntime({ dataDir: dir })).rejects.toMatchObject({ code: 'data_dir_locked', details: { pid: other.child.pid } });
  other.child.kill('SIGKILL');
  await other.exited;
  const runtime = await startRuntime({ dataDir: dir });
  await runtime.memory.append('here', [{ message: { role: 'user', content: 'mine now' } }]);
  await runtime.stop();
});

it('takes over an owner record cut short by a killed writer, and one of a process that is gone', async () => {
  const own = mkdtempSync(join(tmpdir(), 'mnemo-one-proc-stale-'));
  try {
    writeFileSync(join(own, OWNER_FILE), '{"pid":12');
    let runtime = await startRuntime({ dataDir: own });
    expect(JSON.parse(readFileSync(join(own, OWNER_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
    await runtime.stop();
    expect(existsSync(join(own, OWNER_FILE))).toBe(false);

    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(own, OWNER_FILE), JSON.stringify({ pid: Number(gone.stdout), hostname: hostname(), since: new Date().toISOString(), nonce: 'x' }));
    runtime = await startRuntime({ dataDir: own });
    await runtime.memory.append('here', [{ message: { role: 'user', content: 'taken over' } }]);
    await runtime.stop();
  } finally {
    rmSync(own, { recursive: true, force: true });
  }
});
