import { commit, HIGH, type RecallDbs } from '../recall-dbs.ts';
import { joinPerUser, storedDocBatches } from '../search/backfill-walk.ts';
import { currentLongTerm } from '../long-term-store.ts';
import { longTermDoc } from '../../../search/doc-numbers.ts';
import { longTermLines } from '../../../search/documents.ts';
import type { ItemKey } from './embed-dbs.ts';

/**
 * The embedding queue's consumer of the backfill walk (search/backfill-walk.ts): queues what a user
 * stored before their writes queued themselves (embeddings turned on over existing data, an
 * import, an older Mnemo). Every stored document, then each long-term line and current fact,
 * without a vector, a queue entry or a dead letter is queued, a batch of `BACKFILL_BATCH` keys a
 * transaction; the last one marks the user live (embed-hooks.ts), so this runs once per user.
 * Keys only are read; the drain reads the texts.
 */
export const BACKFILL_BATCH = 5_000;

const join = joinPerUser<number>();

export function isEmbedLive(dbs: RecallDbs, userId: string): boolean {
  return dbs.counters.get([userId, 'embed-live']) === 1;
}

export function backfillUser(dbs: RecallDbs & { guard(): void }, userId: string): Promise<number> {
  return join(userId, () => backfill(dbs, userId));
}

async function backfill(dbs: RecallDbs & { guard(): void }, userId: string): Promise<number> {
  let queued = 0;
  for (const batch of storedDocBatches(dbs, userId, BACKFILL_BATCH)) {
    queued += await commit(dbs, () => queueMissing(dbs, batch.rows.map(({ doc }): ItemKey => [userId, 'd', doc])));
  }
  const rest: ItemKey[] = [];
  for (const { line } of longTermLines(currentLongTerm(dbs, userId))) {
    const doc = longTermDoc(line);
    if (doc !== null) rest.push([userId, 'd', doc]);
  }
  for (const key of dbs.factCurrent.getKeys({ start: [userId], end: [userId, HIGH] })) rest.push([userId, 'f', key[1]]);
  queued += await commit(dbs, () => {
    dbs.counters.put([userId, 'embed-live'], 1);
    return queueMissing(dbs, rest);
  });
  return queued;
}

/** Inside a write transaction: queues each item that has no vector, queue entry or dead letter. */
function queueMissing(dbs: RecallDbs, keys: readonly ItemKey[]): number {
  let n = 0;
  for (const key of keys) {
    if (dbs.embed.vectors.doesExist(key) || dbs.embed.queue.doesExist(key) || dbs.embed.dead.doesExist(key)) continue;
    dbs.embed.queue.put(key, { attempts: 0 });
    dbs.embed.onQueued?.(key);
    n++;
  }
  return n;
}

/** Items of the user still waiting for their vector. */
export function pendingOf(dbs: RecallDbs, userId: string): number {
  return dbs.embed.queue.getCount({ start: [userId], end: [userId, HIGH] });
}
