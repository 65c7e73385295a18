import { porterStem } from './porter-stemmer.ts';

/**
 * The tokenizer of the ranked index; the same function runs on documents and on queries.
 *
 * - Text is cut into runs of letters and digits (`\p{L}\p{N}` plus combining marks); every run
 *   is Unicode-normalized (NFKC: full-width `ＡＢＣ１` reads as `abc1`, ligatures split) and
 *   case-folded.
 * - Chinese and Japanese (Han, Hiragana, Katakana) have no spaces: such a run becomes its
 *   overlapping character bigrams (`北京天气` → `北京 京天 天气`); a lone character stays a
 *   unigram. Bigrams need no dictionary, so a query and a document always cut a name the same
 *   way (why not `Intl.Segmenter`: docs/guides/ranked-search.md).
 * - Other runs are words: English stop words are dropped, the rest stemmed (Porter), so
 *   `meetings`, `meeting` and `met`… (`met` stays `met`: a stemmer, not a lemmatizer), and a
 *   final `i` of Porter's `y` → `i` dropped from stems of 5+ letters (`allergies` meets
 *   `allergic`; `conflateFinalI`).
 * - Tokens are at most 64 code units (longer runs are cut there: they are ids or noise, and
 *   keys stay small).
 *
 * `offsets` gives each token's `[start, end)` in the ORIGINAL text, for snippets.
 */
export interface Token {
  term: string;
  start: number;
  end: number;
}

const RUN = /[\p{L}\p{N}\p{M}]+/gu;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー々]+/u;
const CJK_SPLIT = /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー々]+)/u;
const MAX_TOKEN = 64;

// The usual English stop list (Lucene's/Snowball's short list plus pronouns and auxiliaries).
const STOP_WORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her hers him his how i if in into is it its ' +
    'me my no nor not of on or our ours she so such than that the their theirs them then there these they this those to too ' +
    'us was we were what when where which who whom why will with would you your yours am being just over own same some'
  ).split(' '),
);

export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/** The terms of `text`, in order, with repeats (a term's count is its frequency). */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  forEachTerm(text, (term) => out.push(term));
  return out;
}

/** Term → frequency in `text`, and its length in terms (a document's, for the index). */
export function termCounts(text: string): { terms: Map<string, number>; length: number } {
  const terms = new Map<string, number>();
  let length = 0;
  forEachTerm(text, (term) => {
    terms.set(term, (terms.get(term) ?? 0) + 1);
    length++;
  });
  return { terms, length };
}

/**
 * Calls `visit` with the terms of `text`, in order: `tokenize` without the array. ASCII letters
 * and digits (most text) are cut by a char-code loop, not the Unicode regex; a run holding
 * anything else (or starting with it) is matched whole by the regex, from its first character,
 * and cut as below. Same runs and terms as matching `RUN` over the text (tested).
 */
export function forEachTerm(text: string, visit: (term: string) => void): void {
  let start = -1;
  let hash = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) {
      const from = start < 0 ? i : start;
      start = -1;
      RUN_AT.lastIndex = from;
      const m = RUN_AT.exec(text);
      if (m === null) continue; // a character outside every run (punctuation, a symbol)
      visitRun(m[0], visit);
      i = from + m[0].length - 1;
      continue;
    }
    // ASCII letters and digits are exactly \p{L}\p{N}\p{M} below 0x80.
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39)) {
      if (start < 0) {
        start = i;
        hash = 0;
      }
      hash = Math.imul(hash ^ c, 0x01000193);
    } else if (start >= 0) {
      const term = asciiWordTerm(text, start, i, hash);
      if (term !== null) visit(term);
      start = -1;
    }
  }
  if (start >= 0) {
    const term = asciiWordTerm(text, start, text.length, hash);
    if (term !== null) visit(term);
  }
}

// The terms of ASCII words met, by a hash of their characters (open addressing, a few probes,
// overwritten when full): a word found here costs no substring and no Map lookup, the cost of
// tokenizing once the words repeat (Zipf). Made at the first word, not at import (filling the
// tables costs a few ms of a fresh process that may never tokenize).
const WORDS_BITS = 16;
const WORDS_MASK = (1 << WORDS_BITS) - 1;
const WORDS_PROBES = 4;
interface WordTable {
  hashes: Int32Array;
  raws: (string | undefined)[];
  terms: (string | null)[];
}
let words: WordTable | undefined;

function newWordTable(): WordTable {
  return {
    hashes: new Int32Array(1 << WORDS_BITS),
    raws: new Array<string | undefined>(1 << WORDS_BITS).fill(undefined),
    terms: new Array<string | null>(1 << WORDS_BITS).fill(null),
  };
}

/** `wordTerm(text.slice(start, end))` for an ASCII word whose FNV-1a hash is `hash`. */
function asciiWordTerm(text: string, start: number, end: number, hash: number): string | null {
  const { hashes: wordHashes, raws: wordRaws, terms: wordTerms } = (words ??= newWordTable());
  const length = end - start;
  for (let probe = 0; probe < WORDS_PROBES; probe++) {
    const slot = (hash + probe) & WORDS_MASK;
    const raw = wordRaws[slot];
    if (raw === undefined) break;
    if (wordHashes[slot] === hash && raw.length === length && text.startsWith(raw, start)) return wordTerms[slot]!;
  }
  const raw = text.slice(start, end);
  const term = wordTerm(raw);
  let slot = hash & WORDS_MASK;
  for (let probe = 0; probe < WORDS_PROBES; probe++) {
    if (wordRaws[(hash + probe) & WORDS_MASK] === undefined) {
      slot = (hash + probe) & WORDS_MASK;
      break;
    }
  }
  wordHashes[slot] = hash;
  wordRaws[slot] = raw;
  wordTerms[slot] = term;
  return term;
}

/** `RUN`, matched only at `lastIndex`. */
const RUN_AT = /[\p{L}\p{N}\p{M}]+/uy;
const CJK_RUN = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー々]+$/u;

function visitRun(run: string, visit: (term: string) => void): void {
  if (!CJK.test(run)) {
    const term = wordTerm(run);
    if (term !== null) visit(term);
  } else if (CJK_RUN.test(run) && isPlainBmp(run)) {
    // A run of CJK only, in the BMP and NFKC already (nearly every one): its bigrams are its
    // neighbouring code units, as `bigrams` would cut them.
    if (run.length === 1) visit(run);
    for (let i = 0; i + 1 < run.length; i++) visit(run.slice(i, i + 2));
  } else {
    for (const t of tokenizeWithOffsets(run)) visit(t.term);
  }
}

/** No surrogate pairs, and unchanged by NFKC. */
function isPlainBmp(run: string): boolean {
  for (let i = 0; i < run.length; i++) {
    const c = run.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) return false;
  }
  return run.normalize('NFKC') === run;
}

export function* tokenizeWithOffsets(text: string): Generator<Token> {
  RUN.lastIndex = 0;
  for (const m of text.matchAll(RUN)) {
    const run = m[0];
    const base = m.index;
    if (!CJK.test(run)) {
      const term = wordTerm(run);
      if (term !== null) yield { term, start: base, end: base + run.length };
      continue;
    }
    // Mixed runs (`iPhone用户`): words and CJK parts apart.
    let offset = base;
    for (const part of run.split(CJK_SPLIT)) {
      if (part === '') continue;
      if (CJK.test(part)) yield* bigrams(part, offset);
      else {
        const term = wordTerm(part);
        if (term !== null) yield { term, start: offset, end: offset + part.length };
      }
      offset += part.length;
    }
  }
}

// Words repeat (Zipf): a word's term is computed once and remembered, which makes tokenizing
// about 10x faster than normalizing and stemming every occurrence. Bounded: cleared when full.
const TERM_CACHE_MAX = 100_000;
const termCache = new Map<string, string | null>();

function wordTerm(raw: string): string | null {
  const cached = termCache.get(raw);
  if (cached !== undefined) return cached;
  const word = raw.normalize('NFKC').toLowerCase().slice(0, MAX_TOKEN);
  const term = STOP_WORDS.has(word) ? null : conflateFinalI(porterStem(word));
  if (termCache.size >= TERM_CACHE_MAX) termCache.clear();
  termCache.set(raw, term);
  return term;
}

/**
 * Porter turns a final `y` into `i` (`allergy` → `allergi`) but strips `-ic` whole (`allergic` →
 * `allerg`), so the noun and the adjective never meet. Dropping that final `i` from stems of five
 * letters or more joins them (`allergies`, `allergy`, `allergic` → `allerg`; `pharmacy`,
 * `pharmacies` → `pharmac`); shorter stems keep it (`taxi` is not `tax`).
 */
function conflateFinalI(stem: string): string {
  return stem.length >= 5 && stem.endsWith('i') && !/[aeiou]i$/.test(stem) ? stem.slice(0, -1) : stem;
}

function* bigrams(run: string, base: number): Generator<Token> {
  const chars = Array.from(run.normalize('NFKC'));
  // NFKC of CJK text keeps its length in code points for all but compatibility ideographs;
  // offsets come from the original code points so snippets stay aligned.
  const original = Array.from(run);
  const starts: number[] = [];
  let at = base;
  for (const c of original) {
    starts.push(at);
    at += c.length;
  }
  starts.push(at);
  const n = Math.min(chars.length, original.length);
  if (n === 1) {
    yield { term: chars[0]!, start: starts[0]!, end: starts[1]! };
    return;
  }
  for (let i = 0; i + 1 < n; i++) {
    yield { term: chars[i]! + chars[i + 1]!, start: starts[i]!, end: starts[i + 2]! };
  }
}

/**
 * ICU's word segmentation through `Intl.Segmenter` (dictionary-based for Chinese and Japanese),
 * the alternative to bigrams: never used by the index; here so that the retrieval-quality test
 * and bench/search-rank.ts keep comparing the two on the same rules.
 */
export function tokenizeWithSegmenter(text: string, locale = 'zh'): string[] {
  const segmenter = new Intl.Segmenter(locale, { granularity: 'word' });
  const out: string[] = [];
  for (const s of segmenter.segment(text)) {
    if (!s.isWordLike) continue;
    const w = s.segment.normalize('NFKC').toLowerCase().slice(0, MAX_TOKEN);
    if (CJK.test(w)) out.push(w);
    else if (!STOP_WORDS.has(w)) out.push(porterStem(w));
  }
  return out;
}
