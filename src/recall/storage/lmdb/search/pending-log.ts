/**
 * The pending log's blocks (search-index.ts): documents indexed but not merged into the posting
 * lists yet, `PENDING_BLOCK` to a value of `recall.search-postings` under `[userId, PENDING, n]`.
 * A block is a Bloom filter of its terms (`BLOOM_BYTES`), then UTF-8 text, one record per
 * document:
 *
 *   \x01 doc \x03 length ( \x00 term \x02 tf )*
 *
 * Terms hold only letters, digits and marks (tokenizer.ts), numbers only digits, so the
 * separators are unambiguous: a query finds a term's documents with one `indexOf` of
 * `\x00term\x02` per block (read as Latin-1 text), and parses only the records it hits. The
 * filter lets a query skip the `indexOf` of a block that cannot hold the term (most blocks, for
 * most terms): the scan over the text was most of a query's time on a full log. Bits are only
 * ever set (a removed document's stay: a false positive costs an `indexOf`, no wrong answer).
 */
const DOC = 0x01;

/** The filter: 4 096 bits, `BLOOM_PROBES` a term (~5% false positives for 32 documents of ~20 terms). */
export const BLOOM_BYTES = 512;
const BLOOM_BITS = BLOOM_BYTES * 8;
const BLOOM_PROBES = 3;

/** Two 32-bit hashes of the term's UTF-16 code units (FNV-1a, and a multiplicative one), for double hashing. */
function termHashes(term: string): [number, number] {
  let h1 = 0x811c9dc5;
  let h2 = 0;
  for (let i = 0; i < term.length; i++) {
    const c = term.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 + c, 0x9e3779b1) ^ (h2 >>> 15);
  }
  return [h1 >>> 0, (h2 | 1) >>> 0];
}

function setBits(filter: Uint8Array, term: string): void {
  const [h1, h2] = termHashes(term);
  for (let k = 0; k < BLOOM_PROBES; k++) {
    const bit = (h1 + k * h2) % BLOOM_BITS;
    filter[bit >>> 3]! |= 1 << (bit & 7);
  }
}

/** A term's probes, for `mayHold` (computed once per query term). */
export function bloomProbes(term: string): number[] {
  const [h1, h2] = termHashes(term);
  return Array.from({ length: BLOOM_PROBES }, (_, k) => (h1 + k * h2) % BLOOM_BITS);
}

/** Whether the block (as Latin-1 text) may hold the term of `probes`. */
export function mayHold(block: string, probes: readonly number[]): boolean {
  for (const bit of probes) if ((block.charCodeAt(bit >>> 3) & (1 << (bit & 7))) === 0) return false;
  return true;
}

/** The block with the document's record appended (a new block when `block` is undefined). */
export function appendRecord(block: Uint8Array | undefined, doc: number, length: number, terms: ReadonlyMap<string, number>): Buffer {
  const record = Buffer.from(encodeRecord(doc, length, terms), 'utf8');
  const size = block === undefined ? BLOOM_BYTES : block.length;
  const out = Buffer.allocUnsafe(size + record.length);
  if (block === undefined) out.fill(0, 0, BLOOM_BYTES);
  else out.set(block, 0);
  out.set(record, size);
  for (const term of terms.keys()) setBits(out, term);
  return out;
}

export function encodeRecord(doc: number, length: number, terms: ReadonlyMap<string, number>): string {
  let s = `\x01${doc}\x03${length}`;
  for (const [term, tf] of terms) s += `\x00${term}\x02${tf}`;
  return s;
}

/**
 * Calls `visit(term, doc, tf, length)` for every term of every record of the block, in order:
 * the merge's decoder (one pass over the text, no per-record objects).
 */
export function forEachRecordTerm(block: Uint8Array, visit: (term: string, doc: number, tf: number, length: number) => void): void {
  const s = Buffer.from(block.buffer, block.byteOffset, block.byteLength).toString('utf8', BLOOM_BYTES);
  const n = s.length;
  let i = 0;
  let doc = 0;
  let length = 0;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === DOC) {
      doc = 0;
      for (i++; i < n && s.charCodeAt(i) !== 0x03; i++) doc = doc * 10 + (s.charCodeAt(i) - 0x30);
      length = 0;
      for (i++; i < n && s.charCodeAt(i) !== 0x00 && s.charCodeAt(i) !== DOC; i++) length = length * 10 + (s.charCodeAt(i) - 0x30);
    } else {
      // \x00 term \x02 tf
      const end = s.indexOf('\x02', i + 1);
      const term = s.slice(i + 1, end);
      let tf = 0;
      for (i = end + 1; i < n && s.charCodeAt(i) !== 0x00 && s.charCodeAt(i) !== DOC; i++) tf = tf * 10 + (s.charCodeAt(i) - 0x30);
      visit(term, doc, tf, length);
    }
  }
}

/** The block without `doc`'s record; `null` when it holds none; `undefined` when it held only that one. */
export function withoutDoc(block: Uint8Array, doc: number): Buffer | null | undefined {
  const b = Buffer.from(block.buffer, block.byteOffset, block.byteLength);
  const at = b.indexOf(`\x01${doc}\x03`, BLOOM_BYTES);
  if (at < 0) return null;
  const end = b.indexOf(DOC, at + 1);
  if (at === BLOOM_BYTES && end < 0) return undefined;
  return Buffer.concat([b.subarray(0, at), end < 0 ? Buffer.alloc(0) : b.subarray(end)]);
}

function digits(s: string, at: number): { n: number; end: number } {
  let n = 0;
  for (let c = s.charCodeAt(at); c >= 0x30 && c <= 0x39; c = s.charCodeAt(++at)) n = n * 10 + (c - 0x30);
  return { n, end: at };
}

/**
 * Calls `visit(doc, tf, length)` for each record of the block holding the term. The block is
 * read as Latin-1 text (one char a byte: `SearchDbs.pendingText`, no UTF-8 decoding) and
 * `needle` is `termNeedle(term)`, the term's UTF-8 bytes spelled the same way; V8's string
 * search beats `Buffer.indexOf` here by ~2x.
 */
export function forEachMatch(block: string, needle: string, visit: (doc: number, tf: number, length: number) => void): void {
  let at = block.indexOf(needle, BLOOM_BYTES);
  while (at >= 0) {
    const tf = digits(block, at + needle.length).n;
    const start = block.lastIndexOf('\x01', at);
    const doc = digits(block, start + 1);
    visit(doc.n, tf, digits(block, doc.end + 1).n);
    at = block.indexOf(needle, at + needle.length);
  }
}

export function termNeedle(term: string): string {
  return Buffer.from(`\x00${term}\x02`, 'utf8').toString('latin1');
}
