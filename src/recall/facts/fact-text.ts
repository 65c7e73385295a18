/**
 * The text rules of facts, shared by duplicate detection and ranking:
 * - `normalizeFact`: NFKC, case-folded, punctuation and symbols as spaces, whitespace collapsed.
 *   Two facts with equal normal forms are the same fact.
 * - `factTokens`: word tokens for scripts with spaces, character bigrams for CJK (Han, kana,
 *   Hangul; a lone character is its own token), from the normal form.
 * - `isNearDuplicate`: equal normal forms, or token-set Jaccard >= 0.8.
 */
export const NEAR_DUPLICATE_JACCARD = 0.8;

export function normalizeFact(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\p{P}\p{S}]+/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
}

const RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+|[\p{L}\p{N}\p{M}]+/gu;
const CJK = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** Tokens of already-normalized text, in order (repeats kept: ranking counts them). */
export function tokensOfNormal(normal: string): string[] {
  const out: string[] = [];
  for (const [run] of normal.matchAll(RUN)) {
    if (!CJK.test(run)) {
      out.push(run);
      continue;
    }
    const chars = [...run];
    if (chars.length === 1) out.push(chars[0]!);
    for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
  }
  return out;
}

export function factTokens(text: string): string[] {
  return tokensOfNormal(normalizeFact(text));
}

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const t of small) if (large.has(t)) shared++;
  return shared / (a.size + b.size - shared);
}

/** A fact's comparable forms, computed once. */
export interface FactShape {
  normal: string;
  terms: string[];
  set: Set<string>;
}

export function shapeOf(text: string): FactShape {
  const normal = normalizeFact(text);
  const terms = tokensOfNormal(normal);
  return { normal, terms, set: new Set(terms) };
}

export function isNearDuplicate(a: FactShape, b: FactShape): boolean {
  if (a.normal === b.normal) return true;
  if (a.set.size === 0 || b.set.size === 0) return false;
  return jaccard(a.set, b.set) >= NEAR_DUPLICATE_JACCARD;
}
