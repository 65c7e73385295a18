import { join } from 'node:path';
import type { JsonValue } from '../../../src/memory/index.ts';
import type { AdapterFactory, BenchMessage, LogAdapter } from '../types.ts';
import { appendDurably, appendMessageRow, dumpLine, FileLocks, localSeconds, normalizeRows, readRows } from './jsonl-files.ts';

/**
 * The Agent Memory Demo's session files: `memory/<user>/sessions/<session>.jsonl`, one row per
 * message. Append, tail and search all read and parse the whole file, as the demo does (see
 * jsonl-files.ts); so every cost here grows with the conversation's length.
 */
const USER = 'bench';

export const jsonl: AdapterFactory = {
  info: {
    id: 'jsonl',
    label: 'JSONL (demo)',
    durable: true,
    durability: 'fdatasync of the session file per append (+ directory fsync when the file is created)',
    notes: "the demo's way: read the whole file for the next id, append one line",
  },
  async open(dir) {
    const locks = new FileLocks();
    const fileOf = (c: string) => join(dir, 'memory', USER, 'sessions', `${c}.jsonl`);
    const messagesOf = async (c: string): Promise<Record<string, JsonValue>[]> => normalizeRows(await readRows(fileOf(c)));
    const toMessage = (row: Record<string, JsonValue>): BenchMessage => ({
      role: row['role'] as BenchMessage['role'],
      content: row['content'] as string,
    });
    const adapter: LogAdapter = {
      info: jsonl.info,
      async append(c, message) {
        await appendMessageRow(locks, fileOf(c), { role: message.role, content: message.content, tag: 'session' });
      },
      async load(c, messages) {
        const ts = localSeconds();
        const start = (await readRows(fileOf(c))).length;
        const text = messages
          .map((m, i) => dumpLine({ ts, role: m.role, content: m.content, tags: ['session'], meta: {}, message_id: start + i + 1 }))
          .join('');
        await appendDurably(fileOf(c), text, start === 0);
      },
      async tail(c, n) {
        return (await messagesOf(c)).slice(-n).map(toMessage);
      },
      async search(c, keyword, limit) {
        const key = keyword.trim().toLowerCase();
        const matched = (await messagesOf(c)).filter((r) => String(r['content']).toLowerCase().includes(key));
        return matched.slice(-limit).map(toMessage);
      },
      async close() {},
    };
    return adapter;
  },
};
