import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireEnvironment } from '../../src/memory/lmdb/lmdb-environment.ts';
import { openRecallDbs, HIGH } from '../../src/recall/storage/lmdb/recall-dbs.ts';
import { storedRowText as dailyRowText } from '../../src/recall/storage/lmdb/search/search-index.ts';
import { dailyDoc } from '../../src/recall/search/doc-numbers.ts';
import { textHash, vectorHash } from '../../src/recall/search/vector-codec.ts';
import { startEmbeddingsStub } from '../support/embeddings-stub.ts';

// SIGKILL the process while its supervised drain is embedding: two batches answered and
// committed, the third in flight (the stub holds it). A new process on the same directory drains the rest: every
// row ends with exactly one vector of its own text, nothing queued or dead, and the restart
// asks only for what had no vector (the batch in flight included), each text once.

const program = join(import.meta.dirname, '../programs/embed-drain-writer.ts');
const dir = mkdtempSync(join(tmpdir(), 'mnemo-embed-kill-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[], onLine: (line: string, kill: () => void) => void): Promise<{ signal: NodeJS.Signals | null; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', program, dir, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      for (const line of chunk.split('\n').filter((l) => l !== '')) onLine(line, () => child.kill('SIGKILL'));
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('error', reject);
    child.on("exit", (code, signal) => (code !== 0 && signal === null ? reject(new Error(`exited ${code}: ${err}`)) : resolve({ code, signal, err } as never)));
  });
}

async function readStore() {
  const env = acquireEnvironment(dir, {});
  const dbs = openRecallDbs(env);
  const rows = [...dbs.daily.getRange({ start: ['u'], end: ['u', HIGH] })];
  const vectors = new Map([...dbs.embed.vectors.getRange({ start: ['u'], end: ['u', HIGH] })].map(({ key, value }) => [key[2], vectorHash(value)]));
  const out = { rows, vectors, queue: dbs.embed.queue.getCount(), dead: dbs.embed.dead.getCount() };
  await new Promise((r) => setTimeout(r, 0));
  await env.release();
  return out;
}

describe('the embedding drain killed mid-drain', () => {
  it(
    'resumes after SIGKILL and leaves every row with exactly one vector of its text',
    async () => {
      const stub = await startEmbeddingsStub();
      try {
        stub.hold();
        const first = run([stub.baseURL, 'write', '10'], (line, kill) => {
          if (line !== 'written') return;
          void (async () => {
            await stub.waitForRequests(1);
            stub.releaseOne();
            await stub.waitForRequests(2);
            stub.releaseOne();
            await stub.waitForRequests(3);
            kill();
          })();
        });
        const ended = await first;
        expect(ended, JSON.stringify(ended)).toMatchObject({ signal: 'SIGKILL' });
        const killed = await readStore();
        expect(killed.rows.length).toBe(20);
        // Two batches answered (their size depends on how far the writes were), both committed.
        const answeredBefore = stub.texts.length;
        expect(answeredBefore).toBeGreaterThan(0);
        expect(killed.vectors.size).toBe(answeredBefore);
        expect(killed.queue).toBe(20 - answeredBefore);
        stub.release();
        stub.texts.splice(0);

        let status: Record<string, unknown> | undefined;
        await run([stub.baseURL, 'drain'], (line) => {
          status = JSON.parse(line) as Record<string, unknown>;
        });
        expect(status).toMatchObject({ configured: true, pending: 0, userPending: 0, dead: 0 });
        const after = await readStore();
        expect(after.queue).toBe(0);
        expect(after.dead).toBe(0);
        expect(after.vectors.size).toBe(20);
        for (const { key, value } of after.rows) {
          expect(after.vectors.get(dailyDoc(key[1], key[2])!)).toBe(textHash(dailyRowText(value)));
        }
        // The restart embedded only the rows without a vector (the batch in flight included), each once.
        expect(stub.texts.length).toBe(20 - answeredBefore);
        expect(new Set(stub.texts).size).toBe(20 - answeredBefore);
      } finally {
        await stub.close();
      }
    },
    120_000,
  );
});
