import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { completion, startChatServer } from '../support/chat-completions-stub.ts';

const root = resolve(import.meta.dirname, '../..');
const tsx = join(root, 'node_modules/.bin/tsx');

/** Runs an example as its own process, as a user would, and returns its output. */
function runExample(name: string, dataDir: string, env: Record<string, string> = {}): Promise<string> {
  const { OPENAI_API_KEY: _k, OPENAI_BASE_URL: _b, OPENAI_MODEL: _m, ...base } = process.env;
  return new Promise((done, fail) => {
    const child = spawn(tsx, [join(root, 'examples', name), dataDir], { cwd: root, env: { ...base, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => (code === 0 ? done(out) : fail(new Error(`${name} exited ${code}: ${err}`))));
  });
}

const count = (out: string, when: 'before' | 'after'): number => Number(out.match(new RegExp(`history ${when} this run: (\\d+) messages`))?.[1]);

let dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'mnemo-example-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

describe('the quick-start examples keep memory across a restart of the process', () => {
  it('kernel-quickstart: the second run starts from the first run’s history and sends it to the model', async () => {
    const dir = tempDir();
    const first = await runExample('kernel-quickstart.ts', dir);
    expect(count(first, 'before')).toBe(0);
    expect(count(first, 'after')).toBe(4);
    expect(first).toContain('< 收到：我叫张三。我已经记录到记忆中。');
    const second = await runExample('kernel-quickstart.ts', dir);
    expect(count(second, 'before')).toBe(4);
    expect(count(second, 'after')).toBe(8);
    expect(second).toContain('(the model is sent 5 messages)');
    expect(second).toContain('1. user: 我叫张三');
  });

  it('agent-quickstart: the second run continues the first run’s conversation', async () => {
    const dir = tempDir();
    const first = await runExample('agent-quickstart.ts', dir);
    expect(count(first, 'before')).toBe(0);
    expect(count(first, 'after')).toBe(4);
    const second = await runExample('agent-quickstart.ts', dir);
    expect(count(second, 'before')).toBe(4);
    expect(count(second, 'after')).toBe(8);
    expect(second).toContain('last response: 收到：我叫什么？。我已经记录到记忆中。');
  });

  it('agent-quickstart with OPENAI_API_KEY talks to the OpenAI-compatible server, which gets the first run’s history on the second run', async () => {
    const server = await startChatServer((body) => {
      const messages = body['messages'] as { role: string; content: string }[];
      const users = messages.filter((m) => m.role === 'user').map((m) => m.content);
      return completion({ content: `I have seen ${users.length} user messages` });
    });
    try {
      const dir = tempDir();
      const env = { OPENAI_API_KEY: 'sk-loopback', OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: 'loopback' };
      await runExample('agent-quickstart.ts', dir, env);
      const second = await runExample('agent-quickstart.ts', dir, env);
      expect(second).toContain('< I have seen 4 user messages');
      const firstOfSecondRun = server.requests[2]!.body['messages'] as { role: string; content: string }[];
      expect(firstOfSecondRun[0]).toEqual({ role: 'system', content: 'You are a helpful assistant with memory. Answer briefly.' });
      expect(firstOfSecondRun.slice(1).map((m) => m.content)).toEqual(['我叫张三', 'I have seen 1 user messages', '我叫什么？', 'I have seen 2 user messages', '我叫张三']);
      expect(server.requests.every((r) => r.headers.authorization === 'Bearer sk-loopback')).toBe(true);
    } finally {
      await server.close();
    }
  });
});
