/**
 * A packed posting list chunk: a value of `recall.search-postings`. Layout (little endian):
 *
 *   u16 count | u48 firstDoc | u48 lastDoc | count × (varint docDelta, varint tf, varint docLength)
 *
 * Doc numbers ascend within a chunk; the first delta is from `firstDoc`, which the chunk
 * carries itself (so a chunk can move between keys unchanged, and removing its first posting
 * needs no new key). A posting carries its document's length, so BM25 scores a term from its
 * chunks alone (no per-document read). A typical posting takes 3 bytes.
 */
export const CHUNK_POSTINGS = 128;
const HEADER = 14;

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

export function encodeChunk(postings: readonly Posting[]): Buffer {
  const first = postings.length === 0 ? 0 : postings[0]!.doc;
  let size = HEADER;
  let prev = first;
  for (const p of postings) {
    size += varintSize(p.doc - prev) + varintSize(p.tf) + varintSize(p.len);
    prev = p.doc;
  }
  const out = Buffer.allocUnsafe(size);
  putHeader(out, postings.length, first, postings.length === 0 ? 0 : postings[postings.length - 1]!.doc);
  let at = HEADER;
  prev = first;
  for (const p of postings) {
    at = putVarint(out, at, p.doc - prev);
    at = putVarint(out, at, p.tf);
    at = putVarint(out, at, p.len);
    prev = p.doc;
  }
  return out;
}

/** The chunk with `p` appended; `p.doc` must be above every doc in it. */
export function appendPosting(chunk: Uint8Array, p: Posting): Buffer {
  const count = chunkCount(chunk);
  const delta = p.doc - chunkLastDoc(chunk);
  const out = Buffer.allocUnsafe(chunk.length + varintSize(delta) + varintSize(p.tf) + varintSize(p.len));
  out.set(chunk, 0);
  putHeader(out, count + 1, chunkFirstDoc(chunk), p.doc);
  let at = putVarint(out, chunk.length, delta);
  at = putVarint(out, at, p.tf);
  putVarint(out, at, p.len);
  return out;
}

/** Calls `visit` for every posting, in doc order (the hot loop of a query: no allocation). */
export function forEachPosting(chunk: Uint8Array, visit: (doc: number, tf: number, len: number) => void): void {
  let i = HEADER;
  let doc = chunkFirstDoc(chunk);
  const end = chunk.length;
  while (i < end) {
    let b = chunk[i++]!;
    let delta = b & 0x7f;
    for (let scale = 128; b & 0x80; scale *= 128) {
      b = chunk[i++]!;
      delta += (b & 0x7f) * scale;
    }
    b = chunk[i++]!;
    let tf = b & 0x7f;
    for (let scale = 128; b & 0x80; scale *= 128) {
      b = chunk[i++]!;
      tf += (b & 0x7f) * scale;
    }
    b = chunk[i++]!;
    let len = b & 0x7f;
    for (let scale = 128; b & 0x80; scale *= 128) {
      b = chunk[i++]!;
      len += (b & 0x7f) * scale;
    }
    doc += delta;
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
