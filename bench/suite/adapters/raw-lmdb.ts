import { open, type Database, type RootDatabase } from 'lmdb';
import { isoWithOffset } from '../../../src/memory/index.ts';
import { nextTurn } from '../event-loop.ts';
import type { AdapterFactory, BenchMessage, LogAdapter } from '../types.ts';
import { lmdbKeyOf } from './lmdb-layout.ts';

/**
 * The physical limit on this machine: lmdb-js used directly, with the same layout and bytes as
 * Mnemo's LMDB store (ordered keys `[conversationId, id]`, JSON values `{ts, meta, message}`)
 * and the same durable ack (the put's promise, then `flushed`), but nothing else: no
 * validation, no actors, ids from an in-memory counter per conversation.
 */
interface Row {
  ts: string;
  meta: Record<string, never>;
  message: BenchMessage;
}

export const rawLmdb: AdapterFactory = {
  info: {
    id: 'raw-lmdb',
    label: 'raw lmdb-js',
    durable: true,
    durability: 'LMDB commit + fdatasync (lmdb-js event-turn batch; ack = put promise, then `flushed`)',
    notes: 'the limit: same keys and values as Mnemo, no validation, no actors',
  },
  async open(dir) {
    const root: RootDatabase = open({ path: dir, maxDbs: 4 });
    const db: Database<Row, [string, number]> = root.openDB('messages', { encoding: 'json' });
    const lastIds = new Map<string, number>();
    const nextId = (key: string): number => {
      let last = lastIds.get(key);
      if (last === undefined) {
        last = 0;
        for (const k of db.getKeys({ start: [key, Infinity], end: [key], reverse: true, limit: 1 })) last = k[1];
      }
      lastIds.set(key, last + 1);
      return last + 1;
    };
    const adapter: LogAdapter = {
      info: rawLmdb.info,
      async append(c, message) {
        const key = lmdbKeyOf(c);
        await db.put([key, nextId(key)], { ts: isoWithOffset(Date.now()), meta: {}, message });
        await db.flushed;
      },
      async load(c, messages) {
        const key = lmdbKeyOf(c);
        const ts = isoWithOffset(Date.now());
        let last: Promise<boolean> | undefined;
        for (const message of messages) last = db.put([key, nextId(key)], { ts, meta: {}, message });
        await last;
        await db.flushed;
      },
      async tail(c, n) {
        const key = lmdbKeyOf(c);
        const out: BenchMessage[] = [];
        for (const { value } of db.getRange({ start: [key, Infinity], end: [key], reverse: true, limit: n })) {
          out.push(value.message);
        }
        return out.reverse();
      },
      async search(c, keyword, limit) {
        const key = lmdbKeyOf(c);
        const needle = keyword.toLowerCase();
        const out: BenchMessage[] = [];
        for (const { value } of db.getRange({ start: [key, Infinity], end: [key], reverse: true })) {
          if (value.message.content.toLowerCase().includes(needle)) {
            out.push(value.message);
            if (out.length === limit) break;
          }
        }
        return out.reverse();
      },
      async close() {
        await root.flushed;
        await nextTurn();
        await root.close();
      },
    };
    return adapter;
  },
};
