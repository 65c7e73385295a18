import type { Database } from 'lmdb';
import { MAX_DOC } from '../search/search-dbs.ts';
import type { ItemKey } from './embed-dbs.ts';

/**
 * The main thread's copy of users' document vectors as one Float32 matrix each, so a hybrid
 * query's brute-force scan is a pass of dot products over memory instead of a range read of
 * every vector out of LMDB (which costs ~5-10x more: per-entry key decoding and a copy of each
 * value). Valid while the user's `embed-version` (recall.counters, a random number rewritten in
 * every transaction that stores or removes one of their vectors, embed-dbs.ts `vectorsChanged`)
 * is the one it was built at; a query that finds another version rebuilds it. Least recently
 * used users are evicted past `MAX_CACHED_FLOATS` (64 Mi floats, 256 MiB) in all; a user over
 * it alone is not cached (the scan reads LMDB, on the pool when large).
 */
export const MAX_CACHED_FLOATS = 64 * 2 ** 20;

export interface UserMatrix {
  version: number | undefined;
  docs: Float64Array;
  dims: number;
  /** docs.length × dims, row-major, unit rows. */
  matrix: Float32Array;
}

export class VectorCache {
  private users = new Map<string, UserMatrix>();
  private floats = 0;

  matrix(vectors: Database<Buffer, ItemKey>, userId: string, version: number | undefined): UserMatrix | undefined {
    const hit = this.users.get(userId);
    if (hit !== undefined && hit.version === version) {
      this.users.delete(userId);
      this.users.set(userId, hit);
      return hit;
    }
    if (hit !== undefined) this.drop(userId, hit);
    const docs: number[] = [];
    const rows: Float32Array[] = [];
    let dims = -1;
    for (const { key, value } of vectors.getRange({ start: [userId, 'd'], end: [userId, 'd', MAX_DOC] })) {
      const n = (value.length - 4) >> 2;
      if (dims === -1) dims = n;
      if (n !== dims) continue; // a vector of another model's size: never similar
      rows.push(new Float32Array(value.buffer.slice(value.byteOffset + 4, value.byteOffset + 4 + n * 4)));
      docs.push(key[2]);
    }
    const size = Math.max(0, dims) * rows.length;
    const built: UserMatrix = { version, docs: Float64Array.from(docs), dims: Math.max(0, dims), matrix: new Float32Array(size) };
    rows.forEach((r, i) => built.matrix.set(r, i * built.dims));
    if (size > MAX_CACHED_FLOATS) return built;
    while (this.floats + size > MAX_CACHED_FLOATS && this.users.size > 0) {
      const [oldest, entry] = this.users.entries().next().value!;
      this.drop(oldest, entry);
    }
    this.users.set(userId, built);
    this.floats += size;
    return built;
  }

  private drop(userId: string, entry: UserMatrix): void {
    this.users.delete(userId);
    this.floats -= entry.matrix.length;
  }
}

/** doc → cosine with `query` (unit) for every row of the matrix. */
export function matrixScores(m: UserMatrix, query: Float32Array): Map<number, number> {
  const scores = new Map<number, number>();
  if (m.dims !== query.length) return scores;
  const { matrix, dims, docs } = m;
  for (let r = 0, at = 0; r < docs.length; r++, at += dims) {
    let dot = 0;
    for (let i = 0; i < dims; i++) dot += matrix[at + i]! * query[i]!;
    scores.set(docs[r]!, dot);
  }
  return scores;
}
