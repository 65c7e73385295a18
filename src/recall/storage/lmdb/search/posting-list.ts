/**
 * A packed posting list chunk: a value of `recall.search-postings` (format 2, search-dbs.ts).
 * Layout (little endian):
 *
 *   u16 count | u48 firstDoc | u48 lastDoc | count × posting
 *   posting = varint head | [varint id] | [varint tf] | varint docLength
 *
 * A doc number is a day slot and an id in it (search-dbs.ts), so a gap is coded by day:
 * `head = gap × 4 + crossDay × 2 + (tf === 1)`. Within the previous posting's day, `gap` is
 * the id difference (1–2 bytes); across days it is the day difference, and the id follows
 * whole (a plain doc delta across days would take 4 bytes, being at least 2^22). A tf of 1
 * (most postings) costs no byte. The first posting's gap is from `firstDoc`, which the chunk
 * carries itself (so a chunk can move between keys unchanged). A posting carries its
 * document's length, so BM25 scores a term from its chunks alone (no per-document read).
 * A typical posting takes 2–4 bytes (format 1, a plain delta, tf and length: 5.3 on the
 * bench corpus).
 */
export const CHUNK_POSTINGS = 128;
const HEADER = 14;
const SLOT = 2 ** 22;

export interface Posting {
  doc: number;
  tf: number;
  len: number;
}

export function chunkCount(chunk: Uint8Array): number {
  return chunk[0]! | (chunk[1]! << 8);
}

function u48(b: Uint8Array, at: number): number {
  let n = 0;
  for (let i = 5; i >= 0; i--) n = n * 256 + b[at + i]!;
  return n;
}

function putU48(b: Uint8Array, at: number, n: number): void {
  for (let i = 0; i < 6; i++) {
    b[at + i] = n % 256;
    n = Math.floor(n / 256);
  }
}

export function chunkFirstDoc(chunk: Uint8Array): number {
  return u48(chunk, 2);
}

export function chunkLastDoc(chunk: Uint8Array): number {
  return u48(chunk, 8);
}

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

function putVarint(out: Uint8Array, at: number, n: number): number {
  while (n >= 0x80) {
    out[at++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  out[at++] = n;
  return at;
}

function putHeader(out: Uint8Array, count: number, first: number, last: number): void {
  out[0] = count & 0xff;
  out[1] = count >>> 8;
  putU48(out, 2, first);
  putU48(out, 8, last);
}

/** The posting (doc, tf, len) after `prev`, as bytes: its size, then written by `putPosting`. */
function postingSize(prev: number, doc: number, tf: number, len: number): number {
  const ps = Math.floor(prev / SLOT);
  const s = Math.floor(doc / SLOT);
  const size = s === ps ? varintSize((doc - prev) * 4) : varintSize((s - ps) * 4) + varintSize(doc - s * SLOT);
  return size + (tf === 1 ? 0 : varintSize(tf)) + varintSize(len);
}

function putPosting(out: Uint8Array, at: number, prev: number, doc: number, tf: number, len: number): number {
  const ps = Math.floor(prev / SLOT);
  const s = Math.floor(doc / SLOT);
  const one = tf === 1 ? 1 : 0;
  if (s === ps) at = putVarint(out, at, (doc - prev) * 4 + one);
  else {
    at = putVarint(out, at, (s - ps) * 4 + 2 + one);
    at = putVarint(out, at, doc - s * SLOT);
  }
  if (!one) at = putVarint(out, at, tf);
  return putVarint(out, at, len);
}

/**
 * Postings as one flat array, `doc, tf, len` after one another: what a merge gathers per term
 * (millions of postings in a rebuild, so no object each). Its length is three times its count.
 */
export type PostingRun = number[];

/** The chunk of the run's postings `from` to `to` (posting indices, `to` excluded). */
export function encodeRun(run: readonly number[], from = 0, to = run.length / 3): Buffer {
  const first = to > from ? run[from * 3]! : 0;
  let size = HEADER;
  let prev = first;
  for (let i = from * 3; i < to * 3; i += 3) {
    size += postingSize(prev, run[i]!, run[i + 1]!, run[i + 2]!);
    prev = run[i]!;
  }
  const out = Buffer.allocUnsafe(size);
  putHeader(out, to - from, first, to > from ? run[(to - 1) * 3]! : 0);
  let at = HEADER;
  prev = first;
  for (let i = from * 3; i < to * 3; i += 3) {
    at = putPosting(out, at, prev, run[i]!, run[i + 1]!, run[i + 2]!);
    prev = run[i]!;
  }
  return out;
}

/** The chunk with the run's postings `from` to `to` appended (ascending, every doc above the chunk's last). */
export function appendRun(chunk: Uint8Array, run: readonly number[], from = 0, to = run.length / 3): Buffer {
  let prev = chunkLastDoc(chunk);
  let size = chunk.length;
  for (let i = from * 3; i < to * 3; i += 3) {
    size += postingSize(prev, run[i]!, run[i + 1]!, run[i + 2]!);
    prev = run[i]!;
  }
  const out = Buffer.allocUnsafe(size);
  out.set(chunk, 0);
  putHeader(out, chunkCount(chunk) + (to - from), chunkFirstDoc(chunk), run[(to - 1) * 3]!);
  let at = chunk.length;
  prev = chunkLastDoc(chunk);
  for (let i = from * 3; i < to * 3; i += 3) {
    at = putPosting(out, at, prev, run[i]!, run[i + 1]!, run[i + 2]!);
    prev = run[i]!;
  }
  return out;
}

/** `postings` as the run `encodeRun` and `appendRun` take. */
function runOf(postings: readonly Posting[]): number[] {
  const run = new Array<number>(postings.length * 3);
  postings.forEach((p, i) => {
    run[i * 3] = p.doc;
    run[i * 3 + 1] = p.tf;
    run[i * 3 + 2] = p.len;
  });
  return run;
}

export function encodeChunk(postings: readonly Posting[]): Buffer {
  return encodeRun(runOf(postings));
}

/** The chunk with `ps` appended (ascending, every doc above the chunk's last). */
export function appendPostings(chunk: Uint8Array, ps: readonly Posting[]): Buffer {
  return appendRun(chunk, runOf(ps));
}

/** The chunk with `p` appended; `p.doc` must be above every doc in it. */
export function appendPosting(chunk: Uint8Array, p: Posting): Buffer {
  return appendPostings(chunk, [p]);
}

/** Calls `visit` for every posting, in doc order (the hot loop of a query: no allocation). */
export function forEachPosting(chunk: Uint8Array, visit: (doc: number, tf: number, len: number) => void): void {
  let i = HEADER;
  let doc = chunkFirstDoc(chunk);
  let slotBase = Math.floor(doc / SLOT) * SLOT;
  const end = chunk.length;
  while (i < end) {
    let b = chunk[i++]!;
    let head = b & 0x7f;
    for (let scale = 128; b & 0x80; scale *= 128) {
      b = chunk[i++]!;
      head += (b & 0x7f) * scale;
    }
    const one = head & 1;
    if (head & 2) {
      slotBase += Math.floor(head / 4) * SLOT;
      b = chunk[i++]!;
      let id = b & 0x7f;
      for (let scale = 128; b & 0x80; scale *= 128) {
        b = chunk[i++]!;
        id += (b & 0x7f) * scale;
      }
      doc = slotBase + id;
    } else doc += Math.floor(head / 4);
    let tf = 1;
    if (!one) {
      b = chunk[i++]!;
      tf = b & 0x7f;
      for (let scale = 128; b & 0x80; scale *= 128) {
        b = chunk[i++]!;
        tf += (b & 0x7f) * scale;
      }
    }
    b = chunk[i++]!;
    let len = b & 0x7f;
    for (let scale = 128; b & 0x80; scale *= 128) {
      b = chunk[i++]!;
      len += (b & 0x7f) * scale;
    }
    visit(doc, tf, len);
  }
}

/** The postings with `p` in doc order (replacing a posting of the same doc). */
export function withPosting(postings: readonly Posting[], p: Posting): Posting[] {
  const out = postings.filter((q) => q.doc !== p.doc);
  let i = out.length;
  while (i > 0 && out[i - 1]!.doc > p.doc) i--;
  out.splice(i, 0, p);
  return out;
}

export function decodeChunk(chunk: Uint8Array): Posting[] {
  const out: Posting[] = [];
  forEachPosting(chunk, (doc, tf, len) => out.push({ doc, tf, len }));
  return out;
}
