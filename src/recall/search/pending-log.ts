/**
 * The pending log's blocks (search-index.ts): documents indexed but not merged into the posting
 * lists yet, `PENDING_BLOCK` to a value of `recall.search-postings` under `[userId, PENDING, n]`.
 * A block is UTF-8 text, one record per document:
 *
 *   \x01 doc \x03 length ( \x00 term \x02 tf )*
 *
 * Terms hold only letters, digits and marks (tokenizer.ts), numbers only digits, so the
 * separators are unambiguous: a query finds a term's documents with one `indexOf` of
 * `\x00term\x02` per block (read as Latin-1 text), and parses only the records it hits.
 */
const DOC = 0x01;

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
  const s = Buffer.from(block.buffer, block.byteOffset, block.byteLength).toString('utf8');
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

/** The block without `doc`'s record; `null` when it holds none. */
export function withoutDoc(block: Uint8Array, doc: number): Buffer | null {
  const b = Buffer.from(block.buffer, block.byteOffset, block.byteLength);
  const at = b.indexOf(`\x01${doc}\x03`);
  if (at < 0) return null;
  const end = b.indexOf(DOC, at + 1);
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
  let at = block.indexOf(needle);
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
