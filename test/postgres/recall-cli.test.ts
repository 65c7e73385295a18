import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, type CliProcess } from '../support/cli-process.ts';
import { http } from '../support/http.ts';
import { usePostgres } from '../support/postgres-server.ts';

// `mnemo --postgres <url>`: the HTTP server with everything in PostgreSQL, as two app servers
// behind a load balancer would run it: a chat posted to one is read from the other. (The CLI
// uses the database's `mnemo` schema: the test's user id is its own.)
const pg = usePostgres();

describe('mnemo --postgres', { timeout: 120_000 }, () => {
  it('two servers on one database share the layered memory; no data directory is made', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-cli-pg-'));
    pg.cleanup(async () => rmSync(dir, { recursive: true, force: true }));
    const start = async (): Promise<{ p: CliProcess; url: string }> => {
      // The url in the environment, as a password should be given.
      const p = runCli(['--port', '0'], { cwd: dir, env: { MNEMO_DATABASE_URL: pg.url } });
      pg.cleanup(async () => {
        if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
        await p.exited;
      });
      const line = await p.waitForLine((l) => typeof l['url'] === 'string' && l['storage'] === 'postgres');
      expect(JSON.stringify(line)).not.toContain(pg.url);
      return { p, url: line['url'] as string };
    };
    const [a, b] = [await start(), await start()];
    const user = `cli-${process.pid}-${Date.now()}`;
    const call = (url: string, method: string, path: string, body?: unknown) => http(url, method, path, { headers: { 'x-mnemo-request': '1' }, ...(body === undefined ? {} : { body }) });
    expect((await call(a.url, 'POST', '/api/chat', { user_id: user, session_id: 's1', message: 'my bike is green' })).status).toBe(200);
    const listed = await call(b.url, 'GET', `/api/conversations?user_id=${user}`);
    expect((listed.json as { items: Array<{ session_id: string }> }).items.map((i) => i.session_id)).toEqual(['s1']);
    const found = await call(b.url, 'GET', `/api/daily/search?user_id=${user}&keyword=green`);
    expect((found.json as { items: Array<{ content: string }> }).items.map((i) => i.content)).toContain('my bike is green');
    expect((await call(b.url, 'DELETE', `/api/conversations/s1?user_id=${user}`)).status).toBe(200);
    expect(((await call(a.url, 'GET', `/api/conversations?user_id=${user}`)).json as { items: unknown[] }).items).toEqual([]);
    expect(existsSync(join(dir, 'data'))).toBe(false);
    for (const server of [a, b]) {
      server.p.child.kill('SIGTERM');
      expect(await server.p.exited).toBe(0);
    }
  });
});
