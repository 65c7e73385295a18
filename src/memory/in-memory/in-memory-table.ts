import type { Message, StoredMessage } from '../../message.ts';
import type { MessageTable } from '../contract/message-table.ts';
import { ForkError, segmentsOf, stitchedRange, stitchedTail, type ForkLink, type OwnRows } from '../contract/fork.ts';
import { IDEMPOTENCY_WINDOW_MS, type KeyRecord } from '../contract/idempotency.ts';

/**
 * A `MessageTable` in process memory, like beamai's ETS table: fast, and gone with its owner
 * (inside a runtime the store actor owns it, so a crash-restart of the store starts empty).
 * Records are kept as JSON text, as ETS copies terms in and out: no caller can change what is
 * stored by mutating objects, a read decodes once, and a string weighs less than its objects.
 *
 * Forks (fork.ts) are a link per fork and an index of the forks of each source; idempotency
 * keys (idempotency.ts) a map per conversation, expired ones dropped as keyed writes come.
 * The ids of system messages are kept apart, per conversation, for `systemMessages` (a fork's
 * are read through its segments, as `range` reads).
 */
export function createInMemoryTable(): MessageTable {
  /** Per conversation, its own records in id order: record i has id base + i + 1 (a fork's
   * own rows start after its fork point). */
  const conversations = new Map<string, { base: number; rows: string[] }>();
  const links = new Map<string, ForkLink>();
  const forksOf = new Map<string, Set<string>>();
  const keys = new Map<string, Map<string, KeyRecord>>();
  /** Per conversation with a system message among its own rows, their ids, ascending. */
  const systems = new Map<string, number[]>();
  const decode = (text: string) => JSON.parse(text) as StoredMessage;

  const ownLastId = (c: string) => {
    const own = conversations.get(c);
    return own === undefined ? 0 : own.base + own.rows.length;
  };
  const lastId = (c: string) => Math.max(ownLastId(c), links.get(c)?.at ?? 0);
  const own: OwnRows = (c, from, to, limit, reverse) => {
    const o = conversations.get(c);
    if (o === undefined || limit === 0) return [];
    const lo = Math.max(from, o.base + 1) - o.base - 1;
    const hi = Math.min(to, o.base + o.rows.length) - o.base; // exclusive
    if (lo >= hi) return [];
    const slice = reverse ? o.rows.slice(Math.max(lo, hi - limit), hi).reverse() : o.rows.slice(lo, Math.min(hi, lo + limit));
    return slice.map(decode);
  };
  const segments = (c: string) => segmentsOf(c, (id) => links.get(id));
  const range = (c: string, from: number, to: number, limit: number) =>
    limit === 0 || to < from ? [] : stitchedRange(segments(c), from, to, limit, own);

  const systemMessages = (c: string): StoredMessage[] => {
    const out: StoredMessage[] = [];
    const segs = segments(c);
    for (let i = segs.length - 1; i >= 0; i--) {
      const s = segs[i]!;
      const o = conversations.get(s.conversationId);
      if (o === undefined) continue;
      for (const id of systems.get(s.conversationId) ?? []) {
        if (id >= s.from && id <= s.to) out.push(decode(o.rows[id - o.base - 1]!));
      }
    }
    return out;
  };
  const indexSystems = (c: string, records: readonly StoredMessage[]) => {
    for (const r of records) {
      if (r.message.role !== 'system') continue;
      let ids = systems.get(c);
      if (ids === undefined) systems.set(c, (ids = []));
      ids.push(r.message_id);
    }
  };

  const unlink = (c: string) => {
    const link = links.get(c);
    if (link === undefined) return;
    links.delete(c);
    forksOf.get(link.source)?.delete(c);
  };

  /** A batch stored; `async`, so a broken invariant reaches the writer as a rejection, as an LMDB failure does. */
  const store = async (c: string, records: StoredMessage[], written: readonly KeyRecord[] | undefined): Promise<StoredMessage[]> => {
    const stored = records.map((r) => JSON.stringify(r));
    let o = conversations.get(c);
    if (o === undefined) conversations.set(c, (o = { base: links.get(c)?.at ?? 0, rows: [] }));
    const first = records[0];
    if (first !== undefined && first.message_id !== o.base + o.rows.length + 1) {
      throw new Error(`in-memory table: ${c} expects id ${o.base + o.rows.length + 1}, got ${first.message_id}`);
    }
    for (const text of stored) o.rows.push(text);
    indexSystems(c, records);
    if (written !== undefined && written.length > 0) {
      let mine = keys.get(c);
      if (mine === undefined) keys.set(c, (mine = new Map()));
      const cutoff = written[0]!.at - IDEMPOTENCY_WINDOW_MS;
      // Oldest first (a key written again moves to the end): the sweep stops at the first live one.
      for (const [k, r] of mine) {
        if (r.at > cutoff) break;
        mine.delete(k);
      }
      for (const k of written) {
        mine.delete(k.key);
        mine.set(k.key, { key: k.key, firstId: k.firstId, count: k.count, at: k.at });
      }
    }
    return records;
  };

  return {
    kind: 'memory',
    lastId: async (c) => lastId(c),
    lastIdNow: lastId,
    messages: async (c) => range(c, 1, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER).map((r) => r.message as Message),
    range: async (c, from, to, limit) => range(c, from, to, limit),
    tail: async (c, n) => (n === 0 ? [] : stitchedTail(segments(c), n, own)),
    write: (c, records, to, written) => {
      store(c, records, written).then(
        (stored) => to.resolve(stored),
        (error: unknown) => to.reject(error),
      );
    },
    findKeys: async (c, wanted) => {
      const found = new Map<string, KeyRecord>();
      const mine = keys.get(c);
      if (mine !== undefined) for (const k of wanted) {
        const r = mine.get(k);
        if (r !== undefined) found.set(k, r);
      }
      return found;
    },
    keyOf: (c, key) => keys.get(c)?.get(key),
    systemMessages: async (c) => systemMessages(c),
    clear: async (c) => {
      // Forks that read from c get their prefix as their own rows first (fork.ts).
      for (const fork of [...(forksOf.get(c) ?? [])]) {
        const at = links.get(fork)!.at;
        const prefixRecords = range(c, 1, at, at);
        const prefixSystems = systemMessages(fork).filter((r) => r.message_id <= at).map((r) => r.message_id);
        const prefix = prefixRecords.map((r) => JSON.stringify(r));
        const o = conversations.get(fork);
        conversations.set(fork, { base: 0, rows: o === undefined ? prefix : [...prefix, ...o.rows] });
        const ownSystems = systems.get(fork) ?? [];
        if (prefixSystems.length + ownSystems.length > 0) systems.set(fork, [...prefixSystems, ...ownSystems]);
        unlink(fork);
      }
      forksOf.delete(c);
      unlink(c);
      conversations.delete(c);
      keys.delete(c);
      systems.delete(c);
    },
    fork: async (newId, source, at) => {
      const sourceLast = lastId(source);
      if (at > sourceLast) throw new ForkError('fork_point_missing', `conversation ${source} has no message ${at} (its last id is ${sourceLast})`, { source, at, lastId: sourceLast });
      if (lastId(newId) > 0 || links.has(newId)) throw new ForkError('fork_target_exists', `conversation ${newId} already has messages`, { conversationId: newId });
      links.set(newId, { source, at });
      let set = forksOf.get(source);
      if (set === undefined) forksOf.set(source, (set = new Set()));
      set.add(newId);
      conversations.delete(newId);
      systems.delete(newId);
      return at;
    },
  };
}
