import type { Message, StoredMessage } from './message.ts';
import type { MessageTable } from './message-table.ts';

/**
 * A `MessageTable` in process memory, like beamai's ETS table: fast, and gone with its owner
 * (inside a runtime the store actor owns it, so a crash-restart of the store starts empty).
 * Records are copied in and out, so no caller can change what is stored by mutating objects.
 */
export function createInMemoryTable(): MessageTable {
  /** Per conversation, records in id order; ids run 1..n, so record i has id i + 1. */
  const conversations = new Map<string, StoredMessage[]>();
  const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

  return {
    kind: 'memory',
    lastId: async (c) => conversations.get(c)?.length ?? 0,
    messages: async (c) => (conversations.get(c) ?? []).map((r) => copy(r.message) as Message),
    range: async (c, from, to, limit) => {
      const all = conversations.get(c) ?? [];
      const start = Math.max(from, 1) - 1;
      const end = Math.min(to, all.length, start + limit);
      return start < end ? all.slice(start, end).map(copy) : [];
    },
    tail: async (c, n) => {
      const all = conversations.get(c) ?? [];
      return n === 0 ? [] : all.slice(-n).map(copy);
    },
    write: async (c, records) => {
      const stored = records.map(copy);
      let all = conversations.get(c);
      if (all === undefined) conversations.set(c, (all = []));
      const first = stored[0];
      if (first !== undefined && first.message_id !== all.length + 1) {
        throw new Error(`in-memory table: ${c} expects id ${all.length + 1}, got ${first.message_id}`);
      }
      for (const r of stored) all.push(r);
      return records.map(copy);
    },
    clear: async (c) => {
      conversations.delete(c);
    },
  };
}
