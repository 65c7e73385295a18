import type { ItemRow, ItemStorage, ItemWrite, StoredItem } from '../item-storage.ts';
import { run, type PgLangGraph } from './pg-langgraph-connection.ts';

/**
 * The store's storage port (item-storage.ts) on PostgreSQL: `langgraph_items` and
 * `langgraph_item_vectors` (langgraph-schema.ts).
 *
 * - A batch's puts are ONE transaction of three statements (vectors dropped, deletes, upserts
 *   with their vectors), rows taken in (path, key) order; the upsert keeps `created_at`, and
 *   both times are the database's (`now()`: the transaction's start, one time per batch).
 *   Concurrent batches on the same keys queue on the rows' locks; the last to commit wins.
 * - A namespace and everything below it is one index range (`path = p OR p: <= path < p;`),
 *   read in keyset pages; the vectors come in the same statement when asked for.
 * - `namespaces()` is a loose index scan of the primary key: one probe per namespace, not a
 *   read of every item.
 */
export class PgItemStorage implements ItemStorage {
  constructor(private readonly db: PgLangGraph) {}

  checkOpen(): void {
    this.db.checkOpen();
  }

  async get(path: string, key: string): Promise<ItemRow | undefined> {
    const rows = await this.db.query<ItemColumns>(`SELECT value, created_at, updated_at FROM ${this.db.s}.langgraph_items WHERE path = $1 AND key = $2`, [path, key]);
    return rows[0] === undefined ? undefined : itemRow(rows[0]);
  }

  async *itemsUnder(path: string, options: { readonly vectors: boolean }): AsyncGenerator<StoredItem> {
    const page = 256;
    let cursor: { path: string; key: string } | undefined;
    const vectors = options.vectors
      ? `(SELECT array_agg(v.vector ORDER BY v.field) FROM ${this.db.s}.langgraph_item_vectors v WHERE v.path = i.path AND v.key = i.key)`
      : 'NULL::bytea[]';
    for (;;) {
      const rows = await this.db.query<ItemColumns & { path: string; key: string; vectors: Buffer[] | null }>(
        `SELECT i.path, i.key, i.value, i.created_at, i.updated_at, ${vectors} AS vectors FROM ${this.db.s}.langgraph_items i
         WHERE ($1 = '' OR i.path = $1 OR (i.path >= $1 || ':' AND i.path < $1 || ';'))
           AND ($2::text IS NULL OR (i.path, i.key) > ($2, $3))
         ORDER BY i.path, i.key LIMIT ${page}`,
        [path, cursor?.path ?? null, cursor?.key ?? null],
      );
      for (const row of rows) {
        yield {
          path: row.path,
          key: row.key,
          row: itemRow(row),
          vectors: (row.vectors ?? []).map((b) => new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength))),
        };
      }
      if (rows.length < page) return;
      const last = rows[rows.length - 1]!;
      cursor = { path: last.path, key: last.key };
    }
  }

  async namespaces(): Promise<string[]> {
    const rows = await this.db.query<{ path: string }>(
      `WITH RECURSIVE ns AS (
         (SELECT path FROM ${this.db.s}.langgraph_items ORDER BY path LIMIT 1)
         UNION ALL
         SELECT (SELECT i.path FROM ${this.db.s}.langgraph_items i WHERE i.path > ns.path ORDER BY i.path LIMIT 1) FROM ns WHERE ns.path IS NOT NULL
       )
       SELECT path FROM ns WHERE path IS NOT NULL`,
      [],
    );
    return rows.map((r) => r.path);
  }

  write(puts: readonly ItemWrite[]): Promise<void> {
    const sorted = [...puts].sort((a, b) => compareBytes(a.path, b.path) || compareBytes(a.key, b.key));
    const kept = sorted.filter((p) => p.value !== null);
    const vectors = kept.flatMap((p) => p.vectors.map((v) => ({ path: p.path, key: p.key, field: v.field, vector: v.vector })));
    return this.db.tx(async (client) => {
      const { s } = this.db;
      await run(
        client,
        `WITH v AS (
           DELETE FROM ${s}.langgraph_item_vectors v USING unnest($1::text[], $2::text[]) AS u(path, key) WHERE v.path = u.path AND v.key = u.key
         )
         DELETE FROM ${s}.langgraph_items i USING unnest($3::text[], $4::text[]) AS u(path, key) WHERE i.path = u.path AND i.key = u.key`,
        [sorted.map((p) => p.path), sorted.map((p) => p.key), sorted.filter((p) => p.value === null).map((p) => p.path), sorted.filter((p) => p.value === null).map((p) => p.key)],
      );
      if (kept.length === 0) return;
      await run(
        client,
        `WITH items AS (
           INSERT INTO ${s}.langgraph_items AS i (path, key, value, created_at, updated_at)
           SELECT u.path, u.key, u.value::json, now(), now() FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS u(path, key, value, n) ORDER BY u.n
           ON CONFLICT (path, key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
         )
         INSERT INTO ${s}.langgraph_item_vectors (path, key, field, vector) SELECT * FROM unnest($4::text[], $5::text[], $6::text[], $7::bytea[])`,
        [
          kept.map((p) => p.path),
          kept.map((p) => p.key),
          kept.map((p) => JSON.stringify(p.value)),
          vectors.map((v) => v.path),
          vectors.map((v) => v.key),
          vectors.map((v) => v.field),
          vectors.map((v) => Buffer.from(v.vector.buffer, v.vector.byteOffset, v.vector.byteLength)),
        ],
      );
    });
  }

  release(): Promise<void> {
    return this.db.release();
  }
}

interface ItemColumns {
  value: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

function itemRow(row: ItemColumns): ItemRow {
  return { v: row.value, c: row.created_at.getTime(), u: row.updated_at.getTime() };
}

/** Byte order of UTF-8, the order of `COLLATE "C"` (rows locked in the order the index keeps them). */
function compareBytes(a: string, b: string): number {
  return a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b));
}
