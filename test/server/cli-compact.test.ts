import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startRuntime } from '../../src/runtime.ts';
import { runCli } from '../support/cli-process.ts';

// `mnemo compact --data-dir DIR [--rebuild]`: compacts a directory no process holds; refuses a held one.

const root = mkdtempSync(join(tmpdir(), 'mnemo-cli-compact-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

describe('mnemo compact', () => {
  it('compacts a stopped server’s data directory: free pages (and erased bytes in them) are gone, the rest is kept', async () => {
    const dataDir = join(root, 'stopped');
    const rt = await startRuntime({ dataDir, recall: false });
    await rt.memory.add('gone', [{ role: 'user', content: `CLI_ERASED_TEXT ${'z'.repeat(30_000)}` }]);
    await rt.memory.add('kept', [{ role: 'user', content: 'CLI_KEPT_TEXT' }]);
    await rt.memory.clear('gone');
    await rt.stop();
    expect(readFileSync(join(dataDir, 'data.mdb')).includes('CLI_ERASED_TEXT')).toBe(true);

    const p = runCli(['compact', '--data-dir', dataDir], { cwd: root });
    expect(await p.exited).toBe(0);
    const line = p.lines.find((l) => 'compacted' in l)!;
    expect(line).toMatchObject({ compacted: dataDir, bytes_before: expect.any(Number), bytes_after: expect.any(Number) });
    expect(line['bytes_after'] as number).toBeLessThan(line['bytes_before'] as number);
    const bytes = readFileSync(join(dataDir, 'data.mdb'));
    expect(bytes.includes('CLI_ERASED_TEXT')).toBe(false);
    expect(bytes.includes('CLI_KEPT_TEXT')).toBe(true);
    const again = await startRuntime({ dataDir, recall: false });
    expect(await again.memory.get('kept')).toEqual([{ role: 'user', content: 'CLI_KEPT_TEXT' }]);
    await again.stop();
  }, 60_000);

  it('--rebuild: after a plain erasure, no byte of the erased user is left, ids included; the other user is whole', async () => {
    const dataDir = join(root, 'rebuild');
    const rt = await startRuntime({ dataDir, recall: { pool: false } });
    for (const u of ['cligone', 'clikept']) {
      for (let i = 0; i < 3; i++) await rt.recall.chat({ userId: u, sessionId: `${u}-s${i}`, message: `${u.toUpperCase()}_TEXT ${i}` });
    }
    await rt.recall.eraseUser('cligone');
    await rt.stop();
    expect(readFileSync(join(dataDir, 'data.mdb')).includes('cligone')).toBe(true);

    const p = runCli(['compact', '--data-dir', dataDir, '--rebuild'], { cwd: root });
    expect(await p.exited).toBe(0);
    const bytes = readFileSync(join(dataDir, 'data.mdb'));
    for (const needle of ['cligone', 'CLIGONE_TEXT']) expect(bytes.includes(needle), needle).toBe(false);
    const again = await startRuntime({ dataDir, recall: { pool: false } });
    expect((await again.recall.listSessions('clikept')).length).toBe(3);
    expect((await again.recall.getSessionMessages('clikept', 'clikept-s1')).map((m) => m.content)).toContain('CLIKEPT_TEXT 1');
    await again.stop();
  }, 60_000);

  it('refuses a directory a running process holds, with data_dir_locked naming it, and exit 1', async () => {
    const dataDir = join(root, 'held');
    const holder = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../programs/data-dir-holder.ts'), dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(holder);
    const pid = await new Promise<string>((resolve, reject) => {
      let out = '';
      holder.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        const m = /^ready (\d+)\n/.exec(out);
        if (m) resolve(m[1]!);
      });
      holder.on('exit', () => reject(new Error(`holder exited: ${out}`)));
    });
    const p = runCli(['compact', '--data-dir', dataDir], { cwd: root });
    expect(await p.exited).toBe(1);
    expect(p.stderr()).toContain('data_dir_locked');
    expect(p.stderr()).toContain(`process ${pid}`);
    holder.kill('SIGKILL');
  }, 60_000);

  it('answers a bad option with exit 2, and a missing directory with exit 1 (nothing created)', async () => {
    const bad = runCli(['compact', '--port', '1'], { cwd: root });
    expect(await bad.exited).toBe(2);
    const missing = runCli(['compact', '--data-dir', join(root, 'nope')], { cwd: root });
    expect(await missing.exited).toBe(1);
    expect(missing.stderr()).toContain('no data directory');
  }, 60_000);
});
