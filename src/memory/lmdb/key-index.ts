import type { Database } from 'lmdb';
import { IDEMPOTENCY_WINDOW_MS, type KeyRecord } from '../contract/idempotency.ts';
import type { StoredMessage } from '../../message.ts';

/**
 * The idempotency keys of the LMDB table's conversations (idempotency.ts), held in memory and
 * rebuilt from the message rows, so that a keyed append costs LMDB no row of its own (a second
 * row per append costs LMDB itself ~17% of append throughput: bench/exactly-once.ts).
 *
 * - Durable: the first message row of a keyed batch carries its key, `key: [key, count]`, and
 *   its `ts` says when it was stored. Key and batch commit together or not at all.
 * - In memory, per conversation: the keys of its own rows with ids ≤ `through` (the writer's
 *   last id), read back to `from` (the start of the window when it was read), oldest first.
 *   - Read at the conversation's first keyed write in this process: its rows from the newest
 *     back to the start of the window (the rows of the last 24 h; one read when the newest is
 *     older; only rows that carry a key are parsed).
 *   - Kept current by the table's own commits (`committed`), keyed or not.
 *   - Caught up when the writer's last id is ahead of it (another writer on the environment
 *     stored rows the writer has since read), read again when the writer's last id is behind
 *     it (cleared elsewhere) or when asked for an older window than it was read for (a clock
 *     set back).
 * - Bounded: the indexes of about `KEY_INDEX_CONVERSATIONS` conversations, the least recently
 *   used dropped (two generations: a lookup moves nothing unless its conversation is in the old
 *   one) and read again when needed; a conversation's expired keys go as its keyed writes come.
 *   A live key costs ~170 bytes of heap (one of 30 characters).
 * - Key rows of the earlier layout (`[conversationId, '\u0001' + key]` → 20 bytes) are read
 *   with the rows, while one may still be live: `legacyUntil` (lmdb-table.ts) is when the
 *   environment was first opened with this layout, plus the window.
 */
export const KEY_INDEX_CONVERSATIONS = 10_000;

/** The prefix of an earlier key row's second key component (no key contains NUL, so none sorts below). */
export const KEY_ROW = '\u0001';
export const KEY_ROW_END = '\u0002';

/** The row's key field as JSON writes it (last, after `message`); a key inside a string is escaped. */
const KEY_FIELD = Buffer.from(',"key":[');
/** Every row starts `{"ts":"`: its timestamp is read without parsing the row. */
const TS_START = 7;

interface ConversationKeys {
  through: number;
  from: number;
  keys: Map<string, KeyRecord>;
  /** No key of `keys` is older (the first one's time, or earlier: a lower bound). */
  oldest: number;
}

export interface KeyIndex {
  /** The key's record, if `c` stored it after `now - IDEMPOTENCY_WINDOW_MS`; `lastId` is the writer's. */
  lookUp(c: string, key: string, lastId: number, now: number): KeyRecord | undefined;
  /** Every key stored in `c`'s own rows, expired ones too (not the hot path: every row is read). */
  all(c: string): Map<string, KeyRecord>;
  /** `records` (and their `keys`) committed. */
  committed(c: string, records: readonly StoredMessage[], keys: readonly KeyRecord[] | undefined): void;
  /** `c` was cleared. */
  forget(c: string): void;
}

/** Where the index reads rows: the table's, as stored (its pending rows too: lmdb-table.ts). */
export interface KeyRows {
  /** The `messages` database with binary values (for key rows of the earlier layout). */
  raw: Database<Buffer, Array<string | number>>;
  /** Row `id` of `c` as stored (JSON bytes), or undefined. */
  rowAt(c: string, id: number): Buffer | undefined;
  /** The id of `c`'s own last row (0 for none). */
  lastIdOf(c: string): number;
}

/** `legacyUntil`: no key row of the earlier layout is live after this time (epoch ms). */
export function createKeyIndex({ raw, rowAt, lastIdOf }: KeyRows, legacyUntil: number): KeyIndex {
  let young = new Map<string, ConversationKeys>();
  let old = new Map<string, ConversationKeys>();

  const put = (index: ConversationKeys, record: KeyRecord) => {
    index.keys.delete(record.key); // a key stored again (after its window) moves to the end
    index.keys.set(record.key, record);
    if (record.at < index.oldest) index.oldest = record.at;
  };
  const tsOf = (value: Buffer): number => Date.parse(value.toString('latin1', TS_START, value.indexOf(34, TS_START)));
  /** The key a row carries, with its id and time, or undefined. */
  const keyIn = (id: number, value: Buffer, at: number): KeyRecord | undefined => {
    if (value.indexOf(KEY_FIELD) < 0) return undefined;
    const field = (JSON.parse(value.toString('utf8')) as { key?: unknown }).key;
    if (!Array.isArray(field) || typeof field[0] !== 'string' || typeof field[1] !== 'number') return undefined;
    return { key: field[0], firstId: id, count: field[1], at };
  };

  /** `c`'s keys in its rows `lastId` down, stored after `cutoff`, oldest first. */
  const readBack = (c: string, lastId: number, cutoff: number): KeyRecord[] => {
    const found: KeyRecord[] = [];
    // Row by row (no range cursor to set up): an idle conversation costs one read.
    for (let id = lastId; id > 0; id--) {
      const value = rowAt(c, id);
      if (value === undefined) break; // below a fork's own rows
      const at = tsOf(value);
      if (at <= cutoff) break;
      const record = keyIn(id, value, at);
      if (record !== undefined) found.push(record);
    }
    found.reverse();
    if (cutoff < legacyUntil) {
      let legacy = false;
      for (const { key, value } of raw.getRange({ start: [c, KEY_ROW], end: [c, KEY_ROW_END] })) {
        const at = value.readDoubleLE(12);
        if (at <= cutoff) continue;
        legacy = true;
        found.push({ key: (key[1] as string).slice(KEY_ROW.length), firstId: value.readDoubleLE(0), count: value.readUInt32LE(8), at });
      }
      if (legacy) found.sort((a, b) => a.at - b.at);
    }
    return found;
  };

  const read = (c: string, lastId: number, cutoff: number): ConversationKeys => {
    const index: ConversationKeys = { through: lastId, from: cutoff, keys: new Map(), oldest: Infinity };
    for (const record of readBack(c, lastId, cutoff)) put(index, record);
    return index;
  };
  const catchUp = (c: string, index: ConversationKeys, lastId: number) => {
    for (let id = index.through + 1; id <= lastId; id++) {
      const value = rowAt(c, id);
      if (value === undefined) continue;
      const record = keyIn(id, value, tsOf(value));
      if (record !== undefined) put(index, record);
    }
    index.through = lastId;
  };
  const remember = (c: string, index: ConversationKeys) => {
    young.set(c, index);
    if (young.size >= KEY_INDEX_CONVERSATIONS / 2) {
      old = young;
      young = new Map();
    }
  };

  return {
    lookUp: (c, key, lastId, now) => {
      const cutoff = now - IDEMPOTENCY_WINDOW_MS;
      let index = young.get(c);
      if (index === undefined) {
        index = old.get(c);
        if (index !== undefined) {
          old.delete(c);
          remember(c, index);
        }
      }
      if (index === undefined || lastId < index.through || cutoff < index.from) remember(c, (index = read(c, lastId, cutoff)));
      else if (lastId > index.through) catchUp(c, index, lastId);
      return index.keys.get(key);
    },
    all: (c) => {
      return read(c, lastIdOf(c), -Infinity).keys;
    },
    committed: (c, records, keys) => {
      if (young.size === 0 && old.size === 0) return;
      const index = young.get(c) ?? old.get(c);
      if (index === undefined) return;
      // Not right after what the index holds: read it afresh when next looked up.
      if (records[0]!.message_id !== index.through + 1) {
        young.delete(c);
        old.delete(c);
        return;
      }
      index.through = records[records.length - 1]!.message_id;
      if (keys === undefined) return;
      const cutoff = keys[0]!.at - IDEMPOTENCY_WINDOW_MS;
      if (index.oldest <= cutoff) {
        // Oldest first: the sweep stops at the first live one.
        index.oldest = Infinity;
        for (const [k, r] of index.keys) {
          if (r.at > cutoff) {
            index.oldest = r.at;
            break;
          }
          index.keys.delete(k);
        }
      }
      for (const k of keys) put(index, k);
    },
    forget: (c) => {
      young.delete(c);
      old.delete(c);
    },
  };
}
