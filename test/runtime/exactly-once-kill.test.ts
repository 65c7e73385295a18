import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLmdbStore } from '../../src/memory/index.ts';
import { runAndKill } from '../support/kill-child.ts';
import { tempDir } from '../support/runtime-fixtures.ts';

// SIGKILL a keyed writer at random moments, many times over one data directory; after each
// kill the next writer retries every write that was not acknowledged, with the same key.
// Every batch ever tried must end up stored exactly once, at the id it was acknowledged with,
// in its lane's order, and each conversation's ids must be exactly 1..max.

const ROUNDS = Math.min(1000, Number(process.env['MNEMO_KILL_ROUNDS'] ?? 12));
const CONVERSATIONS = 20;
const writer = join(import.meta.dirname, '../programs/kill-keyed-writer.ts');
const dir = tempDir('mnemo-kill-keyed-');
afterAll(() => dir.remove());

interface Write {
  conversation: string;
  key: string;
  size: number;
}

async function runRound(round: number, retry: Write[], killAfterMs: number): Promise<{ tried: Write[]; acks: Map<string, number> }> {
  const retryFile = join(dir.path, `retry-${round}.json`);
  writeFileSync(retryFile, JSON.stringify(retry));
  const lines = await runAndKill(writer, [join(dir.path, 'data'), String(round), String(CONVERSATIONS), retryFile], killAfterMs);
  const tried: Write[] = [];
  const acks = new Map<string, number>();
  for (const line of lines) {
    const [kind, conversation, key, a] = line.split(' ');
    if (kind === 'try') tried.push({ conversation: conversation!, key: key!, size: Number(a) });
    if (kind === 'ack') acks.set(`${conversation} ${key}`, Number(a));
  }
  return { tried, acks };
}

describe(`SIGKILL of a keyed writer, ${ROUNDS} rounds, retrying what was not acknowledged`, () => {
  it(
    'stores every batch exactly once, at its acknowledged id, in order, with ids 1..max',
    async () => {
      const all = new Map<string, Write>();
      const acked = new Map<string, number>();
      let unacked: Write[] = [];
      for (let round = 0; round <= ROUNDS; round++) {
        const last = round === ROUNDS;
        if (last) {
          // The final retry, in this process, through a standalone store on the same keys.
          const store = createLmdbStore({ path: join(dir.path, 'data') });
          try {
            for (const w of unacked) {
              const records = await store.append(w.conversation, Array.from({ length: w.size }, (_, i) => ({ message: { role: 'user' as const, content: `${w.key}#${i}` } })), { idempotencyKey: w.key });
              acked.set(`${w.conversation} ${w.key}`, records[0]!.message_id);
            }
          } finally {
            await store.close();
          }
        } else {
          const { tried, acks } = await runRound(round, unacked, 30 + Math.floor(Math.random() * 400));
          for (const w of tried) all.set(`${w.conversation} ${w.key}`, w);
          for (const [k, id] of acks) {
            if (acked.has(k)) expect(id, `${k} acknowledged at two ids`).toBe(acked.get(k));
            acked.set(k, id);
          }
          unacked = [...all.entries()].filter(([k]) => !acked.has(k)).map(([, w]) => w);
        }
      }
      expect(acked.size).toBe(all.size);

      const store = createLmdbStore({ path: join(dir.path, 'data') });
      try {
        const where = new Map<string, number>();
        for (let c = 0; c < CONVERSATIONS; c++) {
          const records = await store.range(`conv-${c}`);
          records.forEach((r, i) => {
            expect(r.message_id, `conv-${c} position ${i}`).toBe(i + 1);
            const tag = r.message.content as string;
            expect(where.has(`conv-${c} ${tag}`), `${tag} stored twice`).toBe(false);
            where.set(`conv-${c} ${tag}`, r.message_id);
          });
          // In lane order: per lane, keys appear in the order they were tried.
          const lanes = new Map<string, string[]>();
          for (const r of records) {
            const [key, part] = (r.message.content as string).split('#');
            if (part !== '0') continue;
            const [rnd, lane, k] = key!.slice(1).split('.').map(Number);
            const order = lanes.get(String(lane)) ?? [];
            order.push(`${String(rnd).padStart(4, '0')}.${String(k).padStart(6, '0')}`);
            lanes.set(String(lane), order);
          }
          for (const order of lanes.values()) expect(order).toEqual([...order].sort());
        }
        for (const [k, w] of all) {
          for (let i = 0; i < w.size; i++) {
            const id = where.get(`${w.conversation} ${w.key}#${i}`);
            expect(id, `${k} part ${i}`).toBe(acked.get(k)! + i);
          }
        }
      } finally {
        await store.close();
      }
    },
    (ROUNDS + 1) * 15_000,
  );
});
