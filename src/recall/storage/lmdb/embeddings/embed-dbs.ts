import type { Database, RootDatabase } from 'lmdb';
import type { ErrorRecord } from '../../../../errors.ts';

/**
 * The named LMDB databases of the embeddings, in the recall environment. Every key starts with
 * the user id, so a user's erasure (store/user-erasure.ts) removes them with the rest. An item
 * is `[kind, id]`: kind `'d'` a document of the ranked index (its number as in
 * search/search-dbs.ts: a daily row, which serves its session row too, or a long-term line),
 * kind `'f'` a long-term fact (its seq).
 *
 * | db                  | key                     | value                                      |
 * |---------------------|-------------------------|--------------------------------------------|
 * | recall.embed-queue  | [userId, kind, id]      | QueueEntry: waiting to be embedded         |
 * | recall.embed-vectors| [userId, kind, id]      | u32 hash of the text embedded, then Float32 |
 * | recall.embed-dead   | [userId, kind, id]      | DeadEntry: gave up after `maxAttempts`     |
 *
 * And in `recall.counters`: `[userId, 'embed-live']` = 1 once the user's writes queue themselves;
 * `[userId, 'embed-version']`, a random number rewritten whenever one of the user's vectors is
 * stored or removed (what the main thread's vector cache checks: vector-cache.ts).
 *
 * The queue key is written in the transaction that writes the row (embed-hooks.ts), so a row
 * committed is a row queued; the vector replaces the queue key in one later transaction.
 */
export const EMBED_DB_NAMES = {
  queue: 'recall.embed-queue',
  vectors: 'recall.embed-vectors',
  dead: 'recall.embed-dead',
} as const;

export type ItemKind = 'd' | 'f';
export type ItemKey = [string, ItemKind, number];

export interface QueueEntry {
  /** Failed attempts so far. */
  attempts: number;
  /** The last failure (older versions stored the endpoint's message text). */
  error?: ErrorRecord | string;
  /** Not retried before this ISO instant (absent: due now). */
  next_at?: string;
}

export interface DeadEntry {
  attempts: number;
  /** Why (older versions stored the endpoint's message text). */
  error: ErrorRecord | string;
  /** Epoch ms when it was given up. */
  at: number;
}

export interface EmbedDbs {
  queue: Database<QueueEntry, ItemKey>;
  vectors: Database<Buffer, ItemKey>;
  dead: Database<DeadEntry, ItemKey>;
  /** Set by recall when embeddings are configured: only then do writes queue themselves. */
  enabled: boolean;
  /** Called inside the transaction that queued `key` (the job queue notes it for after the commit); set with `enabled`. */
  onQueued: ((key: ItemKey) => void) | undefined;
}

export function openEmbedDbs(env: RootDatabase): EmbedDbs {
  return {
    queue: env.openDB(EMBED_DB_NAMES.queue, { encoding: 'json' }),
    vectors: env.openDB(EMBED_DB_NAMES.vectors, { encoding: 'binary' }),
    dead: env.openDB(EMBED_DB_NAMES.dead, { encoding: 'json' }),
    enabled: false,
    onQueued: undefined,
  };
}

/** Inside a write transaction that stored or removed a vector of the user. */
export function vectorsChanged(counters: Database<number, string[]>, userId: string): void {
  counters.put([userId, 'embed-version'], Math.random() * 2 ** 52);
}
