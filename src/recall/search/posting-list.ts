/**
 * A packed posting list chunk: the value of `[userId, term, firstDoc]` in
 * `recall.search-postings`. Layout (little endian):
 *
 *   u16 count | u32 lastDoc | count × (varint docDelta, varint tf, varint docLength)
 *
 * Doc numbers ascend within a chunk; the first delta is from the key's `firstDoc`, so removing
 * a posting never needs a new key. A posting carries its document's length, so BM25 scores a
 * term from its chunks alone (no per-document read). A typical posting takes 3 bytes.
 */
export const CHUNK_POSTINGS = 128;
const HEADER = 6;

export interface Posting {
  doc: number;
  tf: number;
  len: number;
}

export function chunkCount(chunk: Uint8Array): number {
  return chunk[0]! | (chunk[1]! << 8);
}

function writeVarint(out: number[], n: number): void {
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
}

function header(count: number, lastDoc: number): number[] {
  return [count & 0xff, count >>> 8, lastDoc & 0xff, (lastDoc >>> 8) & 0xff, (lastDoc >>> 16) & 0xff, lastDoc >>> 24];
}

export function encodeChunk(firstDoc: number, postings: readonly Posting[]): Buffer {
  const out = header(postings.length, postings.length === 0 ? firstDoc : postings[postings.length - 1]!.doc);
  let prev = firstDoc;
  for (const p of postings) {
    writeVarint(out, p.doc - prev);
    writeVarint(out, p.tf);
    writeVarint(out, p.len);
    prev = p.doc;
  }
  return Buffer.from(out);
}

/** The chunk with `p` appended; `p.doc` must be above every doc in it. */
export function appendPosting(chunk: Uint8Array, p: Posting): Buffer {
  const count = chunkCount(chunk);
  const last = chunk[2]! | (chunk[3]! << 8) | (chunk[4]! << 16) | (chunk[5]! * 0x1000000);
  const tail: number[] = [];
  writeVarint(tail, p.doc - last);
  writeVarint(tail, p.tf);
  writeVarint(tail, p.len);
  const out = Buffer.allocUnsafe(chunk.length + tail.length);
  out.set(header(count + 1, p.doc), 0);
  out.set(chunk.subarray(HEADER), HEADER);
  out.set(tail, chunk.length);
  return out;
}

/** Calls `visit` for every posting, in doc order (the hot loop of a query: no allocation). */
export function forEachPosting(firstDoc: number, chunk: Uint8Array, visit: (doc: number, tf: number, len: number) => void): void {
  let i = HEADER;
  let doc = firstDoc;
  const end = chunk.length;
  while (i < end) {
    let b = chunk[i++]!;
    let delta = b & 0x7f;
    for (let shift = 7; b & 0x80; shift += 7) {
      b = chunk[i++]!;
      delta += (b & 0x7f) * 2 ** shift;
    }
    b = chunk[i++]!;
    let tf = b & 0x7f;
    for (let shift = 7; b & 0x80; shift += 7) {
      b = chunk[i++]!;
      tf += (b & 0x7f) * 2 ** shift;
    }
    b = chunk[i++]!;
    let len = b & 0x7f;
    for (let shift = 7; b & 0x80; shift += 7) {
      b = chunk[i++]!;
      len += (b & 0x7f) * 2 ** shift;
    }
    doc += delta;
    visit(doc, tf, len);
  }
}

export function decodeChunk(firstDoc: number, chunk: Uint8Array): Posting[] {
  const out: Posting[] = [];
  forEachPosting(firstDoc, chunk, (doc, tf, len) => out.push({ doc, tf, len }));
  return out;
}
