import { escapeIdentifier, type Pool, type PoolClient } from 'pg';
import { vectorHash } from '../../search/vector-codec.ts';

/**
 * pgvector in the PostgreSQL recall adapter: where the `vector` extension is installed (or can be
 * created), embeddings live in a pgvector column and `nearest` orders by its cosine distance
 * operator `<=>` in SQL; elsewhere the FALLBACK keeps them as `bytea` scored in JS (pg-vectors.ts).
 *
 * - DETECTION, at open and by `mnemo migrate` (`enablePgvector`): the column
 *   `recall_vectors.embedding` exists, or `vector` is in `pg_available_extensions` and
 *   `CREATE EXTENSION IF NOT EXISTS vector` succeeds (a role without the right is a fallback, not
 *   an error); then the column is added, under the migrations' advisory lock. The choice belongs
 *   to the schema (the column), so every process on it agrees once opened after the switch.
 * - LAYOUT with pgvector: `embedding` (untyped `vector`: each model's dimension fits) holds the
 *   unit vector, `vector` only the text's hash (4 bytes). A row whose `vector` holds more (written
 *   by the fallback: before the switch, or by a process opened before it) is converted at open;
 *   a partial index finds those rows.
 * - EXACT SEARCH per user: the user's rows of one item through the primary key, ordered by
 *   `<=>`, `LIMIT` twice the rows asked for and some; those candidates are then scored with the
 *   fallback's arithmetic in SQL (the float32 dot product summed in double precision) and ordered
 *   by it, then by id as the fallback breaks ties. The floats are the fallback's (the same unit
 *   float32 values), so ids, order and similarities are the fallback's: `<=>` alone computes in
 *   single precision and orders values equal in exact arithmetic an ulp apart either way. A
 *   vector of another dimension than the query's, or of no length, is similarity 0, as in the
 *   fallback.
 * - HNSW, when large (`HnswRule`): once the table holds `tableRows` vectors of one dimension
 *   (≤ 2000, pgvector's limit for an HNSW index), an HNSW index `vector_cosine_ops` is built on
 *   `embedding::vector(d)` WHERE `vector_dims(embedding) = d`, CONCURRENTLY (writes go on), in
 *   the background of an open (one process at a time). A query whose user has `userRows`
 *   vectors of that item or more, of a dimension so indexed, goes through it: approximate,
 *   with pgvector's iterative scan in strict order so the user filter still finds `limit` rows.
 *   Below, exact: a few thousand vectors cost less scanned than an index walk filtered by user.
 */
export type VectorMode = { kind: 'pgvector'; /** The extension's schema, quoted: `${ext}.vector`. */ ext: string } | { kind: 'bytea' };

/** When the HNSW index is built and used (see above). */
export interface HnswRule {
  /** Vectors of one dimension in the table before its index is built. Default 100,000. */
  tableRows: number;
  /** A user's vectors of one item before their search goes through the index. Default 10,000. */
  userRows: number;
}

export const DEFAULT_HNSW_RULE: HnswRule = { tableRows: 100_000, userRows: 10_000 };

/** pgvector's largest dimension an HNSW index of `vector` takes. */
const HNSW_MAX_DIMS = 2000;

/** Rows converted from the fallback's layout per statement. */
const CONVERT_BATCH = 500;

export const migrationLockKey = (schema: string) => `mnemo.recall.migrate.${schema}`;

/** Brings `recall_vectors` to pgvector's layout when the extension is there or can be made; which layout the schema has. */
export async function enablePgvector(client: PoolClient, schema: string): Promise<VectorMode> {
  const s = escapeIdentifier(schema);
  const probe = async () =>
    (
      await client.query<{ has: boolean; ext: string | null; available: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'embedding' AND NOT attisdropped) AS has,
                (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'vector') AS ext,
                EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available`,
        [`${s}.recall_vectors`],
      )
    ).rows[0]!;
  let found = await probe();
  if (!found.has) {
    if (!found.available && found.ext === null) return { kind: 'bytea' };
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [migrationLockKey(schema)]);
      found = await probe();
      if (!found.has) {
        await client.query('SAVEPOINT mnemo_pgvector');
        try {
          await client.query('CREATE EXTENSION IF NOT EXISTS vector');
        } catch {
          // Not allowed here (no privilege, not installed on this server): the fallback.
          await client.query('ROLLBACK TO SAVEPOINT mnemo_pgvector');
          await client.query('COMMIT');
          return { kind: 'bytea' };
        }
        found = await probe();
        await client.query(`ALTER TABLE ${s}.recall_vectors ADD COLUMN embedding ${found.ext!}.vector`);
        await client.query(`CREATE INDEX IF NOT EXISTS recall_vectors_unconverted ON ${s}.recall_vectors (user_id) WHERE octet_length(vector) > 4`);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
  const mode = { kind: 'pgvector', ext: found.ext! } as const;
  await convertFallbackRows(client, s, mode.ext);
  return mode;
}

/** Rows in the fallback's layout (floats in `vector`) moved to `embedding`, each only if unchanged since read. */
async function convertFallbackRows(client: PoolClient, s: string, ext: string): Promise<void> {
  for (;;) {
    const { rows } = await client.query<{ user_id: string; item: string; id: string; vector: Buffer }>(
      `SELECT user_id, item, id, vector FROM ${s}.recall_vectors WHERE octet_length(vector) > 4 LIMIT ${CONVERT_BATCH}`,
    );
    if (rows.length === 0) return;
    for (const r of rows) {
      const floats = floatsOf(r.vector);
      await client.query(
        `UPDATE ${s}.recall_vectors SET vector = $4, embedding = $5::${ext}.vector WHERE user_id = $1 AND item = $2 AND id = $3 AND vector = $6`,
        [r.user_id, r.item, r.id, r.vector.subarray(0, 4), floats.length === 0 ? null : vectorLiteral(floats), r.vector],
      );
    }
  }
}

/** The fallback's bytes (hash, then float32 LE) as floats. */
function floatsOf(bytes: Buffer): Float32Array {
  const out = new Float32Array((bytes.length - 4) >> 2);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(4 + i * 4);
  return out;
}

/** pgvector's text form of float32 values (each printed exactly: pgvector reads back the same float). */
export function vectorLiteral(v: Float32Array): string {
  return `[${Array.prototype.join.call(v, ',')}]`;
}

/** The 4 bytes kept in `vector` with pgvector: the text's hash, as `vectorHash` reads it. */
export function hashBytes(hash: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  out.writeUInt32LE(hash >>> 0, 0);
  return out;
}

export { vectorHash };

const hnswIndexName = (dims: number) => `recall_vectors_hnsw_${dims}`;

/**
 * Builds the HNSW index of every dimension with `rule.tableRows` vectors or more that has none
 * (CONCURRENTLY, outside any transaction, one process at a time by a session advisory lock; an
 * index a crash left invalid is dropped and built again). Cheap when the table is small (the
 * planner's row estimate is read first).
 */
export async function buildHnswIndexes(client: PoolClient, schema: string, ext: string, rule: HnswRule): Promise<number[]> {
  const s = escapeIdentifier(schema);
  const estimate = await client.query<{ n: number }>(`SELECT COALESCE(reltuples, 0)::float8 AS n FROM pg_class WHERE oid = to_regclass($1)`, [`${s}.recall_vectors`]);
  const counted = Number(estimate.rows[0]?.n ?? 0);
  // reltuples is -1 before the first ANALYZE/VACUUM: count then.
  if (counted >= 0 && counted < rule.tableRows) return [];
  const key = `mnemo.recall.hnsw.${schema}`;
  const { rows: got } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok', [key]);
  if (got[0]?.ok !== true) return [];
  const built: number[] = [];
  try {
    const { rows } = await client.query<{ d: number }>(
      `SELECT vector_dims(embedding) AS d FROM ${s}.recall_vectors WHERE embedding IS NOT NULL GROUP BY 1 HAVING count(*) >= $1`,
      [rule.tableRows],
    );
    for (const { d } of rows) {
      if (d > HNSW_MAX_DIMS) continue;
      const name = hnswIndexName(d);
      const { rows: idx } = await client.query<{ valid: boolean }>(
        `SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass($1)`,
        [`${s}.${escapeIdentifier(name)}`],
      );
      if (idx[0]?.valid === true) continue;
      if (idx[0] !== undefined) await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${s}.${escapeIdentifier(name)}`);
      await client.query(
        `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${escapeIdentifier(name)} ON ${s}.recall_vectors
         USING hnsw ((embedding::${ext}.vector(${d})) ${ext}.vector_cosine_ops) WHERE vector_dims(embedding) = ${d}`,
      );
      built.push(d);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]);
  }
  return built;
}

/**
 * `buildHnswIndexes` in the background on `pool` (one connection); `close` drops the connection
 * (the server then cancels a build running, which the next open redoes) and ends the pool.
 */
export function startHnswBuild(pool: Pool, schema: string, ext: string, rule: HnswRule): { close(): Promise<void> } {
  pool.on('error', () => {});
  let client: PoolClient | undefined;
  let closed = false;
  const done = (async () => {
    client = await pool.connect();
    client.on('error', () => {});
    if (closed) return;
    await buildHnswIndexes(client, schema, ext, rule);
    client.release();
    client = undefined;
  })().catch(() => {
    client?.release(true);
    client = undefined;
  });
  return {
    async close() {
      closed = true;
      client?.release(true);
      client = undefined;
      await done;
      await pool.end();
    },
  };
}

/** Read a statement's rows (the adapter's `read`, or a client's query). */
export type ReadRows = <R extends Record<string, unknown>>(text: string, values: unknown[]) => Promise<R[]>;
/** Runs `body` in one read transaction (`SET LOCAL` needs one). */
export type InTransaction = <T>(body: (query: ReadRows) => Promise<T>) => Promise<T>;

/**
 * The user's `limit` nearest vectors of `item` to `query` (a unit vector): `(id, similarity,
 * hash)`, best first, ties by id as `ties` says (`'desc'`: higher first, facts; `'asc'`: lower
 * first, documents). Exact, or through the HNSW index when the rule says so (see above).
 */
export async function nearestRows(
  read: ReadRows,
  inTx: InTransaction,
  s: string,
  ext: string,
  rule: HnswRule,
  userId: string,
  item: 'd' | 'f',
  query: Float32Array,
  limit: number,
  ties: 'asc' | 'desc',
): Promise<{ id: number; similarity: number; hash: number }[]> {
  const dims = query.length;
  const toRows = (rows: { id: string | number; distance: number; vector: Buffer }[]) =>
    rows.map((r) => ({ id: Number(r.id), similarity: 1 - Number(r.distance), hash: vectorHash(r.vector) }));
  if (dims === 0) {
    // No query: every similarity is 0 (cosineWith's answer), so the ties' order alone.
    const rows = await read<{ id: string; vector: Buffer }>(
      `SELECT id, vector FROM ${s}.recall_vectors WHERE user_id = $1 AND item = $2 ORDER BY id ${ties === 'desc' ? 'DESC' : 'ASC'} LIMIT $3`,
      [userId, item, limit],
    );
    return rows.map((r) => ({ id: Number(r.id), similarity: 0, hash: vectorHash(r.vector) }));
  }
  const literal = vectorLiteral(query);
  if (dims <= HNSW_MAX_DIMS) {
    const [probe] = await read<{ indexed: boolean; n: string | number }>(
      `SELECT to_regclass($3) IS NOT NULL AS indexed,
              (SELECT count(*) FROM (SELECT 1 FROM ${s}.recall_vectors WHERE user_id = $1 AND item = $2 LIMIT $4) x) AS n`,
      [userId, item, `${s}.${escapeIdentifier(hnswIndexName(dims))}`, rule.userRows],
    );
    if (probe?.indexed === true && Number(probe.n) >= rule.userRows) {
      return inTx(async (q) => {
        // The rule chose the index: the planner is told not to sort instead (its estimate of one
        // user's share of the table is what the rule already knows better).
        await q(`SELECT set_config('hnsw.iterative_scan', 'strict_order', true), set_config('hnsw.ef_search', $1, true), set_config('enable_sort', 'off', true)`, [
          String(Math.max(40, Math.min(1000, limit))),
        ]);
        const rows = await q<{ id: string; distance: number; vector: Buffer }>(
          `SELECT id, vector, (embedding::${ext}.vector(${dims}) OPERATOR(${ext}.<=>) $3::${ext}.vector(${dims}))::float8 AS distance
           FROM ${s}.recall_vectors WHERE user_id = $1 AND item = $2 AND vector_dims(embedding) = ${dims}
           ORDER BY embedding::${ext}.vector(${dims}) OPERATOR(${ext}.<=>) $3::${ext}.vector(${dims}) LIMIT $4`,
          [userId, item, literal, limit],
        );
        return toRows(rows);
      });
    }
  }
  // Candidates by `<=>` (single precision: values equal in exact arithmetic may come out an ulp
  // apart, in either order), then the fallback's own arithmetic on them: the dot product of the
  // float32 values summed in order in double precision, exactly what cosineWith computes, so
  // similarities and ties are the fallback's. The slack covers candidates that single precision
  // put just past the cut. NaN (a zero vector), another dimension, no embedding: similarity 0.
  const rows = await read<{ id: string; vector: Buffer; similarity: number }>(
    `SELECT c.id, c.vector, s.similarity FROM (
       SELECT id, vector, embedding FROM ${s}.recall_vectors WHERE user_id = $1 AND item = $2
       ORDER BY CASE WHEN vector_dims(embedding) = $4
         THEN COALESCE(NULLIF((embedding OPERATOR(${ext}.<=>) $3::${ext}.vector)::float8, 'NaN'), 1) ELSE 1 END, id ${ties === 'desc' ? 'DESC' : 'ASC'}
       LIMIT $6
     ) c CROSS JOIN LATERAL (
       SELECT CASE WHEN vector_dims(c.embedding) = $4 THEN COALESCE(sum(x::float8 * y::float8), 0) ELSE 0 END AS similarity
       FROM unnest(c.embedding::real[], $5::real[]) AS u(x, y)
     ) s
     ORDER BY s.similarity DESC, c.id ${ties === 'desc' ? 'DESC' : 'ASC'} LIMIT $7`,
    [userId, item, literal, dims, `{${Array.prototype.join.call(query, ',')}}`, limit * 2 + 16, limit],
  );
  return rows.map((r) => ({ id: Number(r.id), similarity: Number(r.similarity), hash: vectorHash(r.vector) }));
}
