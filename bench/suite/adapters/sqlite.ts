import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { AdapterFactory, BenchMessage, LogAdapter } from '../types.ts';

/**
 * The usual SQL chat history: better-sqlite3, WAL, `synchronous=FULL` (an fsync of the WAL at
 * every commit), one table `messages(conversation_id, message_id, json)` with the primary key
 * `(conversation_id, message_id)` (WITHOUT ROWID, so the key is the clustered index), one
 * autocommit INSERT per message with the id computed in the statement. better-sqlite3 is
 * synchronous: each commit blocks the event loop for its fsync, so concurrent conversations
 * queue behind each other (there is no group commit across them).
 */
interface Row {
  json: string;
}

export const sqlite: AdapterFactory = {
  info: {
    id: 'sqlite',
    label: 'SQLite WAL',
    durable: true,
    durability: 'fsync of the WAL per commit (journal_mode=WAL, synchronous=FULL), one transaction per message',
    notes: 'better-sqlite3 (synchronous: a commit blocks the event loop)',
    compaction: 'VACUUM (the database rewritten, pages packed), then a WAL checkpoint',
  },
  async open(dir) {
    const db = new Database(join(dir, 'chat.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(`CREATE TABLE IF NOT EXISTS messages (
      conversation_id TEXT NOT NULL,
      message_id INTEGER NOT NULL,
      json TEXT NOT NULL,
      PRIMARY KEY (conversation_id, message_id)
    ) WITHOUT ROWID`);
    const insert = db.prepare(
      `INSERT INTO messages (conversation_id, message_id, json)
       VALUES (?, (SELECT COALESCE(MAX(message_id), 0) + 1 FROM messages WHERE conversation_id = ?), ?)`,
    );
    const tail = db.prepare<[string, number], Row>(
      'SELECT json FROM messages WHERE conversation_id = ? ORDER BY message_id DESC LIMIT ?',
    );
    const search = db.prepare<[string, string, number], Row>(
      `SELECT json FROM messages WHERE conversation_id = ? AND json_extract(json, '$.content') LIKE ? ESCAPE '\\'
       ORDER BY message_id DESC LIMIT ?`,
    );
    const row = (m: BenchMessage) => JSON.stringify({ ts: new Date().toISOString(), role: m.role, content: m.content });
    const loadMany = db.transaction((c: string, messages: readonly BenchMessage[]) => {
      for (const m of messages) insert.run(c, c, row(m));
    });
    const toMessage = (r: Row): BenchMessage => {
      const { role, content } = JSON.parse(r.json) as BenchMessage;
      return { role, content };
    };
    const adapter: LogAdapter = {
      info: sqlite.info,
      async append(c, message) {
        insert.run(c, c, row(message));
      },
      async load(c, messages) {
        loadMany(c, messages);
      },
      async tail(c, n) {
        return tail.all(c, n).reverse().map(toMessage);
      },
      async search(c, keyword, limit) {
        const pattern = `%${keyword.trim().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
        return search.all(c, pattern, limit).reverse().map(toMessage);
      },
      async compact() {
        db.exec('VACUUM');
        db.pragma('wal_checkpoint(TRUNCATE)');
      },
      async close() {
        db.close();
      },
    };
    return adapter;
  },
};
