import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startRuntime } from '../../src/runtime.ts';
import { startServer } from '../../src/server/index.ts';
import { http } from '../support/http.ts';
import { startTestServer } from '../support/test-server.ts';

// What a client sees when the storage, not the request, fails: a status it can act on (503:
// retry, here or on another server; 507: full) and a fixed sentence with the error's code,
// never the driver's message (which can name a host, a path or a database).

describe('storage failures over HTTP', () => {
  it('answers 503 recall_unavailable from a runtime started without the layered memory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-norecall-'));
    const runtime = await startRuntime({ name: 'mnemo_no_recall', dataDir: dir, recall: false });
    const server = await startServer({ recall: runtime.recall, runtime, host: '127.0.0.1', port: 0 });
    try {
      const res = await http(server.url, 'POST', '/api/chat', { body: { user_id: 'u', session_id: 's', message: 'hello' } });
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ detail: 'this server runs without the layered memory', code: 'recall_unavailable' });
    } finally {
      await server.close();
      await runtime.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const mountPoint = mkdtempSync(join(tmpdir(), 'mnemo-http-tmpfs-'));
  const canMount = (() => {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mountPoint], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  afterAll(() => {
    if (canMount) execFileSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  it.skipIf(!canMount)('answers 507 storage_full, with no path in it, on a full disk, and the server keeps answering', async () => {
    const dataDir = join(mountPoint, 'data');
    mkdirSync(dataDir);
    const server = await startTestServer({ dataDir });
    try {
      let res;
      for (let i = 0; i < 400; i++) {
        res = await server.request('POST', '/api/chat', { body: { user_id: 'u', session_id: `s${i % 4}`, message: `${i} ${'x'.repeat(8000)}` } });
        if (res.status !== 200) break;
      }
      expect(res!.status, res!.text).toBe(507);
      expect(res!.json).toEqual({ detail: 'the storage is full', code: 'storage_full' });
      expect(res!.text).not.toContain(mountPoint);
      expect((await server.request('GET', '/api/conversations?user_id=u')).status).toBe(200);
    } finally {
      await server.close({ keepData: true });
    }
  }, 120_000);
});
