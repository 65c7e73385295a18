import type { Message, StoredMessage } from '../../message.ts';
import type { MessageTable } from '../contract/message-table.ts';

/**
 * A `MessageTable` in process memory, like beamai's ETS table: fast, and gone with its owner
 * (inside a runtime the store actor owns it, so a crash-restart of the store starts empty).
 * Records are kept as JSON text, as ETS copies terms in and out: no caller can change what is
 * stored by mutating objects, a read decodes once, and a string weighs less than its objects.
 * The positions of system messages are kept apart, for `systemMessages`.
 */
export function createInMemoryTable(): MessageTable {
  /** Per conversation, records in id order; ids run 1..n, so record i has id i + 1. */
  const conversations = new Map<string, string[]>();
  /** Per conversation with a system message, the positions of its system messages. */
  const systems = new Map<string, number[]>();
  const decode = (text: string) => JSON.parse(text) as StoredMessage;

  return {
    kind: 'memory',
    lastId: async (c) => conversations.get(c)?.length ?? 0,
    messages: async (c) => (conversations.get(c) ?? []).map((text) => decode(text).message as Message),
    range: async (c, from, to, limit) => {
      const all = conversations.get(c) ?? [];
      const start = Math.max(from, 1) - 1;
      const end = Math.min(to, all.length, start + limit);
      return start < end ? all.slice(start, end).map(decode) : [];
    },
    tail: async (c, n) => {
      const all = conversations.get(c) ?? [];
      return n === 0 ? [] : all.slice(-n).map(decode);
    },
    write: async (c, records) => {
      const stored = records.map((r) => JSON.stringify(r));
      let all = conversations.get(c);
      if (all === undefined) conversations.set(c, (all = []));
      const first = records[0];
      if (first !== undefined && first.message_id !== all.length + 1) {
        throw new Error(`in-memory table: ${c} expects id ${all.length + 1}, got ${first.message_id}`);
      }
      for (let i = 0; i < stored.length; i++) {
        if (records[i]!.message.role === 'system') {
          let positions = systems.get(c);
          if (positions === undefined) systems.set(c, (positions = []));
          positions.push(all.length);
        }
        all.push(stored[i]!);
      }
      return records;
    },
    systemMessages: async (c) => {
      const all = conversations.get(c) ?? [];
      return (systems.get(c) ?? []).map((i) => decode(all[i]!));
    },
    clear: async (c) => {
      conversations.delete(c);
      systems.delete(c);
    },
  };
}
