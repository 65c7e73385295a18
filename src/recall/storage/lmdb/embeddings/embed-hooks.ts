import { HIGH, type RecallDbs } from '../recall-dbs.ts';
import { dailyDoc, longTermDoc, sessionDoc } from '../../../search/doc-numbers.ts';
import { hasStoredDocs } from '../search/backfill-walk.ts';
import { longTermLines } from '../../../search/documents.ts';
import { vectorsChanged, type ItemKey, type ItemKind } from './embed-dbs.ts';

/**
 * Where the stores queue rows for embedding: each hook runs INSIDE the write transaction that
 * writes (or removes) the row, so a committed row is a queued row and a removed row takes its
 * vector, queue entry and dead letter with it. Nothing happens unless embeddings are configured
 * (`dbs.embed.enabled`).
 *
 * Like the ranked index (search/index-hooks.ts), a user's writes queue themselves once the user
 * is live: a user with nothing stored becomes live at their first write; a user with rows from
 * before (embeddings just turned on, an import) is backfilled whole (embed-backfill.ts) at their
 * first hybrid query. Removals always apply (embeddings on earlier may have left vectors).
 */
function liveOrFresh(dbs: RecallDbs, userId: string): boolean {
  if (dbs.counters.get([userId, 'embed-live']) === 1) return true;
  if (hasStoredDocs(dbs, userId)) return false;
  for (const _ of dbs.facts.getKeys({ start: [userId], end: [userId, HIGH], limit: 1 })) return false;
  dbs.counters.put([userId, 'embed-live'], 1);
  return true;
}

/** Inside a write transaction: queues the item (a no-op when it already has its vector). */
export function enqueueItem(dbs: RecallDbs, key: ItemKey): void {
  dbs.embed.queue.put(key, { attempts: 0 });
  dbs.embed.dead.remove(key);
  dbs.embed.onQueued?.(key);
}

/** Inside a write transaction: the item's vector, queue entry and dead letter go. */
export function dropItem(dbs: RecallDbs, key: ItemKey): void {
  dbs.embed.queue.remove(key);
  if (dbs.embed.vectors.doesExist(key)) {
    dbs.embed.vectors.remove(key);
    vectorsChanged(dbs.counters, key[0]);
  }
  dbs.embed.dead.remove(key);
}

function queue(dbs: RecallDbs, userId: string, kind: ItemKind, id: number | null): void {
  if (id !== null && dbs.embed.enabled && liveOrFresh(dbs, userId)) enqueueItem(dbs, [userId, kind, id]);
}

export function embedDailyRowPut(dbs: RecallDbs, userId: string, day: string, id: number): void {
  // The hot path of every turn: without embeddings, one property read.
  if (dbs.embed.enabled) queue(dbs, userId, 'd', dailyDoc(day, id));
}

export function embedDailyRowRemove(dbs: RecallDbs, userId: string, day: string, id: number): void {
  const doc = dailyDoc(day, id);
  if (doc !== null) dropItem(dbs, [userId, 'd', doc]);
}

export function embedSessionDocPut(dbs: RecallDbs, userId: string, order: number, id: number): void {
  if (dbs.embed.enabled) queue(dbs, userId, 'd', sessionDoc(order, id));
}

export function embedSessionDocRemove(dbs: RecallDbs, userId: string, order: number, id: number): void {
  const doc = sessionDoc(order, id);
  if (doc !== null) dropItem(dbs, [userId, 'd', doc]);
}

/** The long-term document changed: lines whose text changed are queued again, lines gone are dropped. */
export function embedLongTermChange(dbs: RecallDbs, userId: string, before: string, after: string): void {
  if (!dbs.embed.enabled && before === '') return;
  const old = new Map(longTermLines(before).map((l) => [l.line, l.text]));
  const now = new Map(longTermLines(after).map((l) => [l.line, l.text]));
  for (const line of old.keys()) {
    const doc = longTermDoc(line);
    if (doc !== null && !now.has(line)) dropItem(dbs, [userId, 'd', doc]);
  }
  if (!dbs.embed.enabled) return; // removals only: nothing is queued, so no vector is looked up
  for (const [line, text] of now) {
    if (old.get(line) === text && dbs.embed.vectors.doesExist([userId, 'd', line])) continue;
    queue(dbs, userId, 'd', longTermDoc(line));
  }
}

export function embedFactWritten(dbs: RecallDbs, userId: string, seq: number): void {
  queue(dbs, userId, 'f', seq);
}

export function embedFactEnded(dbs: RecallDbs, userId: string, seq: number): void {
  dropItem(dbs, [userId, 'f', seq]);
}
