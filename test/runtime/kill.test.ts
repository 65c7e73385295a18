import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLmdbStore } from '../../src/memory/index.ts';
import { runAndKill } from '../support/kill-child.ts';
import { tempDir } from '../support/runtime-fixtures.ts';

// SIGKILL a writer at random moments, many times over one data directory. Every write that
// was acknowledged must be there, at the id it was acknowledged with, and each conversation's
// ids must be exactly 1..max: no gap, no duplicate, across every crash.

const ROUNDS = Math.min(1000, Number(process.env['MNEMO_KILL_ROUNDS'] ?? 20));
const CONVERSATIONS = 40;
const writer = join(import.meta.dirname, '../programs/kill-writer.ts');
const dir = tempDir('mnemo-kill-');
afterAll(() => dir.remove());

interface Round {
  acks: Array<{ conversation: string; id: number; tag: string }>;
}

async function runRound(round: number, killAfterMs: number): Promise<Round> {
  const lines = await runAndKill(writer, [dir.path, String(round), String(CONVERSATIONS)], killAfterMs);
  const acks = lines
    .filter((l) => l.startsWith('ack '))
    .map((l) => {
      const [, conversation, id, tag] = l.split(' ');
      return { conversation: conversation!, id: Number(id), tag: tag! };
    });
  return { acks };
}

describe(`SIGKILL of a writer, ${ROUNDS} rounds`, () => {
  it(
    'keeps every acknowledged write, at its id, with ids 1..max per conversation',
    async () => {
      const acked = new Map<string, { conversation: string; id: number }>();
      for (let round = 0; round < ROUNDS; round++) {
        const killAfterMs = 20 + Math.floor(Math.random() * 400);
        const { acks } = await runRound(round, killAfterMs);
        for (const a of acks) acked.set(a.tag, a);

        const store = createLmdbStore({ path: dir.path });
        try {
          const seen = new Set<string>();
          const where = new Map<string, number>();
          for (let c = 0; c < CONVERSATIONS; c++) {
            const records = await store.range(`conv-${c}`);
            records.forEach((r, i) => {
              expect(r.message_id, `conv-${c} position ${i}`).toBe(i + 1);
              const tag = r.message.content as string;
              expect(seen.has(tag), `${tag} stored twice`).toBe(false);
              seen.add(tag);
              where.set(tag, r.message_id);
            });
          }
          for (const [tag, a] of acked) expect(where.get(tag), `acknowledged ${tag} (round ${round}, kill after ${killAfterMs} ms)`).toBe(a.id);
        } finally {
          await store.close();
        }
      }
      expect(acked.size).toBeGreaterThan(ROUNDS);
    },
    ROUNDS * 15_000,
  );
});
