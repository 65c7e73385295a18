import { commit, HIGH, type RecallDbs } from '../recall-dbs.ts';
import { currentLongTerm } from '../long-term-store.ts';
import { SESSION_DOC } from '../search/search-dbs.ts';
import { dailyDoc, longTermDoc, sessionDoc } from '../../../search/doc-numbers.ts';
import { longTermLines } from '../../../search/documents.ts';
import type { ItemKey } from './embed-dbs.ts';

/**
 * Queues what a user stored before their writes queued themselves (embeddings turned on over
 * existing data, or an older Mnemo): every daily row, session document (store/session-docs.ts),
 * long-term line and current fact without a vector or a queue entry, in batches of
 * `BACKFILL_BATCH` keys per transaction; the last one marks the user live (embed-hooks.ts), so this runs once per user. Keys only are read; texts
 * are read by the drain. One backfill per user at a time in a process.
 */
export const BACKFILL_BATCH = 5_000;

const running = new Map<string, Promise<number>>();

export function isEmbedLive(dbs: RecallDbs, userId: string): boolean {
  return dbs.counters.get([userId, 'embed-live']) === 1;
}

export function backfillUser(dbs: RecallDbs & { guard(): void }, userId: string): Promise<number> {
  let job = running.get(userId);
  if (!job) {
    job = backfill(dbs, userId).finally(() => running.delete(userId));
    running.set(userId, job);
  }
  return job;
}

async function backfill(dbs: RecallDbs & { guard(): void }, userId: string): Promise<number> {
  const wanted = (key: ItemKey) => !dbs.embed.vectors.doesExist(key) && !dbs.embed.queue.doesExist(key) && !dbs.embed.dead.doesExist(key);
  let queued = 0;
  const put = (keys: ItemKey[]) =>
    commit(dbs, () => {
      let n = 0;
      for (const key of keys) if (wanted(key)) {
        dbs.embed.queue.put(key, { attempts: 0 });
        dbs.embed.onQueued?.(key);
        n++;
      }
      return n;
    });
  let batch: ItemKey[] = [];
  for (const key of dbs.daily.getKeys({ start: [userId], end: [userId, HIGH] })) {
    const doc = dailyDoc(key[1], key[2]);
    if (doc !== null) batch.push([userId, 'd', doc]);
    if (batch.length >= BACKFILL_BATCH) {
      queued += await put(batch);
      batch = [];
    }
  }
  for (const key of dbs.search.sessionDocs.getKeys({ start: [userId, SESSION_DOC, 0], end: [userId, SESSION_DOC, Infinity] })) {
    const doc = sessionDoc(key[2], key[3]);
    if (doc !== null) batch.push([userId, 'd', doc]);
    if (batch.length >= BACKFILL_BATCH) {
      queued += await put(batch);
      batch = [];
    }
  }
  for (const { line } of longTermLines(currentLongTerm(dbs, userId))) {
    const doc = longTermDoc(line);
    if (doc !== null) batch.push([userId, 'd', doc]);
  }
  for (const key of dbs.factCurrent.getKeys({ start: [userId], end: [userId, HIGH] })) batch.push([userId, 'f', key[1]]);
  queued += await commit(dbs, () => {
    let n = 0;
    for (const key of batch) if (wanted(key)) {
      dbs.embed.queue.put(key, { attempts: 0 });
      dbs.embed.onQueued?.(key);
      n++;
    }
    dbs.counters.put([userId, 'embed-live'], 1);
    return n;
  });
  return queued;
}

/** Items of the user still waiting for their vector. */
export function pendingOf(dbs: RecallDbs, userId: string): number {
  return dbs.embed.queue.getCount({ start: [userId], end: [userId, HIGH] });
}
