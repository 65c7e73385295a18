import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { completion, startChatStub, type ChatStub } from '../support/chat-completions-stub.ts';
import { runCli, type CliProcess } from '../support/cli-process.ts';
import { http } from '../support/http.ts';

// The `mnemo` command as a real child process: start, chat, stop with a signal, start again
// on the same data dir and find everything there.

let dir: string;
let running: CliProcess[] = [];
/** Process groups of `npm start` runs: whatever is left of them is killed after each test. */
let groups: number[] = [];
beforeEach(() => {
  groups = [];
  dir = mkdtempSync(join(tmpdir(), 'mnemo-cli-'));
  running = [];
});
afterEach(async () => {
  for (const g of groups) if (groupAlive(g)) process.kill(-g, 'SIGKILL');
  for (const p of running) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await p.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

const isListening = (l: Record<string, unknown>): boolean => typeof l['url'] === 'string' && 'dataDir' in l;

async function start(extraArgs: string[] = [], env: Record<string, string> = {}) {
  const p = runCli(['--port', '0', '--data-dir', join(dir, 'data'), ...extraArgs], { cwd: dir, env });
  running.push(p);
  const line = await p.waitForLine(isListening);
  return { p, url: line['url'] as string, line };
}

/** Whether any process of the process group `pgid` is still running. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

async function stop(p: CliProcess, signal: NodeJS.Signals): Promise<number | string> {
  p.child.kill(signal);
  return p.exited;
}

// Each start loads the whole tree through tsx in a fresh process: seconds on a busy machine.
describe('mnemo command', { timeout: 120_000 }, () => {
  it('prints its help and exits 0', async () => {
    const p = runCli(['--help'], { cwd: dir });
    running.push(p);
    expect(await p.exited).toBe(0);
    expect(p.lines.map((l) => l['raw']).join('\n')).toContain('Usage: mnemo [serve] [options]');
  });

  it('prints the version from package.json and exits 0', async () => {
    const p = runCli(['--version'], { cwd: dir });
    running.push(p);
    expect(await p.exited).toBe(0);
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(p.lines.map((l) => l['raw'] ?? l)).toEqual([version]);
  });

  it('refuses a bad option with exit code 2 and a message', async () => {
    const p = runCli(['--port', 'eighty'], { cwd: dir });
    running.push(p);
    expect(await p.exited).toBe(2);
    expect(p.stderr()).toMatch(/invalid port/);
  });

  it('exits 1 with a JSON error line when it cannot listen', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = blocker.address() as AddressInfo;
      const p = runCli(['--port', String(port), '--data-dir', join(dir, 'data')], { cwd: dir });
      running.push(p);
      expect(await p.exited).toBe(1);
      const line = JSON.parse(p.stderr().trim().split('\n').pop() ?? '{}') as { level: number; msg: string };
      expect(line.level).toBe(50);
      expect(line.msg).toMatch(/EADDRINUSE/);
    } finally {
      blocker.close();
    }
  });

  it('logs JSON lines saying where it listens, its data dir, storage and LLM', async () => {
    const { p, url, line } = await start();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(line).toMatchObject({
      dataDir: join(dir, 'data'),
      storage: 'lmdb',
      llm: { kind: 'fallback' },
      auth: 'none',
      level: 30,
    });
    expect(await stop(p, 'SIGTERM')).toBe(0);
  });

  it('logs a line per /api/runtime request at debug level only when MNEMO_LOG_LEVEL=debug', async () => {
    const isRuntimeRequest = (l: Record<string, unknown>): boolean => l['msg'] === 'request' && l['route'] === '/api/runtime';
    const quiet = await start();
    expect((await http(quiet.url, 'GET', '/api/runtime')).status).toBe(200);
    expect(await stop(quiet.p, 'SIGTERM')).toBe(0);
    expect(quiet.p.lines.filter(isRuntimeRequest)).toEqual([]);

    const verbose = await start([], { MNEMO_LOG_LEVEL: 'debug' });
    expect((await http(verbose.url, 'GET', '/api/runtime')).status).toBe(200);
    expect(await verbose.p.waitForLine(isRuntimeRequest)).toMatchObject({ level: 20, status: 200 });
    expect(await stop(verbose.p, 'SIGTERM')).toBe(0);
  });

  it('keeps a conversation across SIGTERM and a restart on the same data dir', async () => {
    const first = await start();
    const sent = await http(first.url, 'POST', '/api/chat', {
      body: { user_id: 'demo-user', session_id: 'keep', message: 'remember the lighthouse' },
    });
    expect(sent.status).toBe(200);
    expect(await stop(first.p, 'SIGTERM')).toBe(0);
    expect(first.p.lines.some((l) => l['msg'] === 'stopped cleanly')).toBe(true);

    const second = await start();
    const list = await http(second.url, 'GET', '/api/conversations?user_id=demo-user');
    // The command's default language is auto: an English message gets English (title and reply).
    expect(list.json).toEqual({ items: [{ session_id: 'keep', title: 'remember the lighthouse', updated_at: expect.any(String) }] });
    const messages = await http(second.url, 'GET', '/api/conversations/keep/messages?user_id=demo-user');
    expect((messages.json as { items: { content: string }[] }).items.map((i) => i.content)).toEqual([
      'remember the lighthouse',
      'Got it: remember the lighthouse. I have saved it to memory.',
    ]);
    expect(await stop(second.p, 'SIGINT')).toBe(0);
  });

  it('takes the per-user limits from its flags (--rate-limit, --max-sessions)', async () => {
    const { p, url } = await start(['--rate-limit', '3', '--max-sessions', '1']);
    const chat = (session_id: string) => http(url, 'POST', '/api/chat', { body: { user_id: 'lim', session_id, message: 'hi' } });
    expect((await chat('one')).status).toBe(200);
    expect((await chat('two')).json).toMatchObject({ code: 'session_limit' });
    expect((await chat('one')).status).toBe(200);
    expect((await chat('one')).json).toMatchObject({ code: 'rate_limited' });
    expect(await stop(p, 'SIGTERM')).toBe(0);
  });

  it('stops at the stop deadline while an upload trickles in a byte a second (its socket is closed)', async () => {
    // The request timeout is an hour: only the stop deadline can end this upload.
    const { p, url } = await start(['--stop-timeout', '300', '--request-timeout', '3600000']);
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    await once(socket, 'connect');
    socket.on('error', () => {}); // a reset is as good as a close here
    const closed = once(socket, 'close');
    socket.write('POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{');
    const trickle = setInterval(() => socket.writable && socket.write(' '), 1000);
    try {
      await new Promise((r) => setTimeout(r, 200)); // the request has reached the server
      expect(await stop(p, 'SIGTERM')).toBe(0);
      await closed;
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
    expect(p.lines.some((l) => l['msg'] === 'stopped cleanly')).toBe(true);
  });

  it('npm start stops every process it started when npm itself gets SIGTERM', async () => {
    const config = join(dir, 'llm.yaml');
    writeFileSync(config, 'llm:\n'); // not the checkout's config/llm.yaml: offline
    const p = runCli(['--port', '0', '--data-dir', join(dir, 'data'), '--llm-config', config], { cwd: dir, npmStart: true });
    running.push(p);
    const url = (await p.waitForLine(isListening))['url'] as string;
    const group = p.child.pid!;
    groups.push(group);
    {
      p.child.kill('SIGTERM'); // npm's own pid, as a process manager would
      await p.exited;
      // Every process of the script's group is gone (the server stopped cleanly, not orphaned).
      while (groupAlive(group)) await new Promise((r) => setTimeout(r, 50));
      await expect(http(url, 'GET', '/api/runtime')).rejects.toThrow(/ECONNREFUSED/);
    }
  });

  it("npm start stops cleanly on a terminal's Ctrl-C (SIGINT to the group, which npm forwards again)", async () => {
    const config = join(dir, 'llm.yaml');
    writeFileSync(config, 'llm:\n');
    const p = runCli(['--port', '0', '--data-dir', join(dir, 'data'), '--llm-config', config], { cwd: dir, npmStart: true });
    running.push(p);
    await p.waitForLine(isListening);
    const group = p.child.pid!;
    groups.push(group);
    process.kill(-group, 'SIGINT');
    expect(await p.exited).toBe(0);
    expect(p.lines.some((l) => l['msg'] === 'stopped cleanly')).toBe(true);
    expect(p.lines.some((l) => l['msg'] === 'second signal: exiting without a clean stop')).toBe(false);
  });

  it('extracts long-term facts from a finished turn with the configured chat model (off with --facts-model off)', async () => {
    const isExtraction = (body: Record<string, unknown>) =>
      JSON.stringify((body['messages'] as unknown[])[0]).includes('{\\"facts\\": [');
    const stub: ChatStub = await startChatStub({
      reply: (body) => completion({ content: isExtraction(body) ? '{"facts": [{"text": "keeps a lighthouse", "key": "job"}]}' : 'ok' }),
    });
    try {
      const llmEnv = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: stub.baseURL, OPENAI_MODEL: 'stub-model' };
      const on = await start([], llmEnv);
      expect(on.line).toMatchObject({ llm: { model: 'stub-model', factsModel: 'stub-model' } });
      expect((await http(on.url, 'POST', '/api/chat', { body: { user_id: 'u', session_id: 's', message: 'I keep a lighthouse' } })).status).toBe(200);
      let items: { text: string }[] = [];
      for (let i = 0; i < 200 && items.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 25));
        items = ((await http(on.url, 'GET', '/api/memory?user_id=u')).json as { items: { text: string }[] }).items;
      }
      expect(items.map((e) => e.text)).toEqual(['keeps a lighthouse']);
      expect(stub.requests.filter(isExtraction).map((b) => b['model'])).toEqual(['stub-model']);
      expect(await stop(on.p, 'SIGTERM')).toBe(0);

      const before = stub.requests.length;
      const off = await start(['--facts-model', 'off'], llmEnv);
      expect(off.line).toMatchObject({ llm: { factsModel: 'off' } });
      expect((await http(off.url, 'POST', '/api/chat', { body: { user_id: 'u', session_id: 's2', message: 'I keep bees' } })).status).toBe(200);
      expect(await stop(off.p, 'SIGTERM')).toBe(0);
      expect(stub.requests.slice(before).filter(isExtraction)).toEqual([]);
    } finally {
      await stub.close();
    }
  });

  it('finishes a turn in flight when stopped, and the restart sees it', async () => {
    const stub: ChatStub = await startChatStub();
    try {
      const llmEnv = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: stub.baseURL, OPENAI_MODEL: 'stub-model' };
      const first = await start([], llmEnv);
      expect(first.line).toMatchObject({ llm: { kind: 'openai-compatible', model: 'stub-model', keyFrom: 'env' } });
      expect(JSON.stringify(first.p.lines)).not.toContain('sk-test');

      stub.hold();
      const turn = http(first.url, 'POST', '/api/chat', {
        body: { user_id: 'u', session_id: 'inflight', message: 'lighthouse keeper' },
      });
      await stub.waitForRequest(1); // the turn is now inside the model call
      first.p.child.kill('SIGTERM');
      await first.p.waitForLine((l) => l['msg'] === 'stopping: no new requests, finishing turns in flight');
      stub.release();

      const answered = await turn;
      expect(answered.status).toBe(200);
      expect((answered.json as { reply: string; tool_calls: unknown[] }).reply).toBe(
        'stub answer to "lighthouse keeper" (1 tool results)',
      );
      expect(await first.p.exited).toBe(0);

      const second = await start([], llmEnv);
      const messages = await http(second.url, 'GET', '/api/conversations/inflight/messages?user_id=u');
      const items = (messages.json as { items: { role: string; tool_calls: { name: string }[] }[] }).items;
      expect(items.map((i) => i.role)).toEqual(['user', 'assistant']);
      expect(items[1]?.tool_calls.map((c) => c.name)).toEqual(['search_session']);
      expect(await stop(second.p, 'SIGTERM')).toBe(0);
    } finally {
      await stub.close();
    }
  });

  it('requires the bearer token given by MNEMO_TOKEN', async () => {
    const { p, url, line } = await start([], { MNEMO_TOKEN: 'cli-token' });
    expect(line['auth']).toBe('bearer token');
    expect((await http(url, 'GET', '/api/conversations?user_id=u')).status).toBe(401);
    const ok = await http(url, 'GET', '/api/conversations?user_id=u', { headers: { authorization: 'Bearer cli-token' } });
    expect(ok.status).toBe(200);
    expect(await stop(p, 'SIGTERM')).toBe(0);
  });

  it('takes each request’s user from the --user-tokens file: its own user_id only', async () => {
    const file = join(dir, 'tokens.yaml');
    writeFileSync(file, 'alice-cli-token-0123456789: alice\nshort: bob\n');
    const { p, url, line } = await start(['--user-tokens', file]);
    expect(line['auth']).toBe('2 user tokens');
    expect(p.stderr()).toMatch(/warning: .*"bob".*shorter than 16/);
    expect(p.stderr()).not.toContain('short:');
    const alice = { authorization: 'Bearer alice-cli-token-0123456789' };
    expect((await http(url, 'GET', '/api/conversations?user_id=alice', { headers: alice })).status).toBe(200);
    expect((await http(url, 'GET', '/api/conversations?user_id=bob', { headers: alice })).status).toBe(403);
    expect((await http(url, 'GET', '/api/conversations?user_id=alice')).status).toBe(401);
    expect((await http(url, 'GET', '/metrics', { headers: alice })).status).toBe(403);
    expect(await stop(p, 'SIGTERM')).toBe(0);
  });

  it('reloads the --user-tokens file on SIGHUP without a restart; a bad file keeps the tokens in use; a readable file is warned of', async () => {
    const file = join(dir, 'tokens.yaml');
    writeFileSync(file, 'alice-cli-token-0123456789: alice\n', { mode: 0o600 });
    const { p, url } = await start(['--user-tokens', file]);
    expect(p.stderr()).not.toMatch(/group or others/);
    const as = (secret: string) => ({ authorization: `Bearer ${secret}` });
    const status = async (secret: string) => (await http(url, 'GET', '/api/conversations', { headers: as(secret) })).status;
    expect(await status('alice-cli-token-0123456789')).toBe(200);
    const logged = (msg: string) => (l: Record<string, unknown>) => l['msg'] === msg;
    const count = (msg: string) => p.lines.filter(logged(msg)).length;

    // Rotated: the old token is gone, the new one works, the process is the same.
    writeFileSync(file, 'alice-rotated-0123456789: alice\n');
    p.child.kill('SIGHUP');
    await p.waitForLine(logged('reloaded the user tokens file'));
    expect(await status('alice-cli-token-0123456789')).toBe(401);
    expect(await status('alice-rotated-0123456789')).toBe(200);

    // A broken file changes nothing, and says why (never a token).
    writeFileSync(file, '{"alice-rotated-0123456789": " spaced"}');
    p.child.kill('SIGHUP');
    const refused = await p.waitForLine(logged('the user tokens file was not reloaded: the tokens in use stay'));
    expect(refused['reason']).toMatch(/entry 1: the user id must not start or end with a space/);
    expect(JSON.stringify(refused)).not.toContain('alice-rotated');
    expect(await status('alice-rotated-0123456789')).toBe(200);

    // Readable by others: reloaded, with a warning, as at start.
    writeFileSync(file, 'bob-cli-token-0123456789: bob\n');
    chmodSync(file, 0o644);
    p.child.kill('SIGHUP');
    await expect.poll(() => count('reloaded the user tokens file')).toBe(2);
    expect(p.lines.some((l) => l['level'] === 40 && /group or others \(mode 0644\).*chmod 600/.test(String(l['msg'])))).toBe(true);
    expect(await status('bob-cli-token-0123456789')).toBe(200);
    expect(await status('alice-rotated-0123456789')).toBe(401);
    expect(await stop(p, 'SIGTERM')).toBe(0);

    // At start too, on stderr.
    const again = await start(['--user-tokens', file]);
    expect(again.p.stderr()).toMatch(/warning: the user tokens file .*tokens\.yaml can be read or written by its group or others \(mode 0644\)/);
    expect(await stop(again.p, 'SIGINT')).toBe(0);
  });

  it('exits 2 for a bad user tokens file and for a non-loopback host with the API open', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, '{"a-token-0123456789abc": " spaced"}');
    const bad = runCli(['--user-tokens', file, '--port', '0'], { cwd: dir });
    running.push(bad);
    expect(await bad.exited).toBe(2);
    expect(bad.stderr()).toMatch(/mnemo: the user tokens file .*bad\.json, entry 1: the user id must not start or end with a space/);
    const open = runCli(['--host', '0.0.0.0', '--port', '0'], { cwd: dir });
    running.push(open);
    expect(await open.exited).toBe(2);
    expect(open.stderr()).toMatch(/refusing to listen on 0\.0\.0\.0 with the API open.*--allow-open/);
  });

  it('answers the probes without a token and counts a turn’s appends in /metrics behind the admin token', async () => {
    const { p, url } = await start([], { MNEMO_TOKEN: 'cli-token', MNEMO_ADMIN_TOKEN: 'cli-admin' });
    expect((await http(url, 'GET', '/healthz')).json).toEqual({ status: 'ok' });
    expect((await http(url, 'GET', '/readyz')).status).toBe(200);
    const turn = await http(url, 'POST', '/api/chat', {
      body: { user_id: 'u', session_id: 's', message: 'hi' },
      headers: { authorization: 'Bearer cli-token', 'x-request-id': 'cli-req-1' },
    });
    expect(turn.status).toBe(200);
    expect((await http(url, 'GET', '/metrics', { headers: { authorization: 'Bearer cli-token' } })).status).toBe(403);
    const metrics = await http(url, 'GET', '/metrics', { headers: { authorization: 'Bearer cli-admin' } });
    expect(metrics.text).toMatch(/^mnemo_chat_turns_total\{outcome="ok"\} 1$/m);
    expect(metrics.text).toMatch(/^mnemo_appends_total [1-9]/m);
    expect(p.lines.find((l) => l['msg'] === 'request' && l['route'] === '/api/chat')?.['reqId']).toBe('cli-req-1');
    expect(await stop(p, 'SIGTERM')).toBe(0);
  });
});
