import { o200kTokenCounter } from '../../provider/token-counter.ts';
import type { FactEntry } from '../records/fact-entry.ts';
import { factSeq } from '../records/fact-entry.ts';
import { factTokens } from './fact-text.ts';
import { renderDocument } from './fact-document.ts';
import type { FactsView } from './facts-view.ts';
import { reciprocalRankFusion } from '../search/rrf.ts';
import { bm25Idf, bm25Term } from '../search/bm25.ts';

/** With embeddings: the user's current entries by vector similarity to `query` (seqs, best
 * first), `undefined` when the query cannot be embedded (embeddings/fact-semantic.ts). */
export type FactSemantic = (userId: string, query: string) => Promise<number[] | undefined>;

/**
 * Ranked injection of long-term facts: what a turn's `[LONG_TERM]` section carries.
 *
 * `rankFacts` is the one place that ranks: BM25 (k1 1.2, b 0.75) over the user's current
 * entries, tokenized by the facts' own rules (fact-text.ts: words, CJK bigrams), ties and
 * zero scores in newest-first order, then filled greedily into the token budget (an entry
 * that does not fit is skipped, a smaller one after it may still go in). Entries are short and
 * their token shapes are cached (facts-view.ts), so a pass over 10 000 of them is a few
 * milliseconds. To rank with the shared full-text index instead (src/recall/search/), replace
 * the scoring loop of this one function with a query of that index restricted to the user's
 * current entry ids; its callers only see the ordered, budgeted list.
 *
 * With embeddings configured (`semantic`, embeddings/fact-semantic.ts), the BM25 order
 * (entries scoring above 0) and the vector order (cosine of the query's embedding with each
 * current entry's) are fused by reciprocal rank fusion (k = 60), `score` is the fused score, and
 * the entries neither ranking holds follow newest first; when the query cannot be embedded the
 * ranking is BM25's alone, as without embeddings.
 *
 * `longTermContext` keeps the Demo's form while it fits: when the whole rendered document is
 * within the budget it is injected as it is (so small memories read exactly as in the Demo);
 * past the budget, the ranked entries go in instead, one per line, in rank order. Either way
 * the section costs at most `tokenBudget` tokens, however many entries the user has.
 */
export interface RankOptions {
  /** Entries at most. Default 50. */
  limit?: number;
  /** o200k tokens at most, counting each entry's text and its newline. Default 300. */
  tokenBudget?: number;
}

export const DEFAULT_LONG_TERM_TOKENS = 300;
export const DEFAULT_RANK_LIMIT = 50;

/** A current fact with its rank for a query (`recall.rankFacts`). */
export interface RankedFact {
  /** The fact. */
  entry: FactEntry;
  /** Its score: BM25, or fused with vector similarity when embeddings are on; higher is better. */
  score: number;
  /** What its line costs in the budget (o200k tokens, the newline included). */
  tokens: number;
}


export async function rankFacts(deps: { semantic?: FactSemantic | undefined }, view: FactsView, query: string, options: RankOptions = {}): Promise<RankedFact[]> {
  const limit = options.limit ?? DEFAULT_RANK_LIMIT;
  const budget = options.tokenBudget ?? DEFAULT_LONG_TERM_TOKENS;
  const count = await textTokens();
  const docs = [...view.current.values()];
  const queryTerms = new Set(factTokens(query));
  const scored: { i: number; score: number }[] = [];
  if (queryTerms.size > 0 && docs.length > 0) {
    const avgdl = docs.reduce((n, d) => n + d.shape.terms.length, 0) / docs.length || 1;
    const df = new Map<string, number>();
    for (const t of queryTerms) df.set(t, docs.filter((d) => d.shape.set.has(t)).length);
    docs.forEach((d, i) => {
      let score = 0;
      const tf = new Map<string, number>();
      for (const t of d.shape.terms) if (queryTerms.has(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const [t, f] of tf) {
        const n = df.get(t)!;
        score += bm25Term(bm25Idf(docs.length, n), f, d.shape.terms.length, avgdl);
      }
      scored.push({ i, score });
    });
  } else {
    docs.forEach((_, i) => scored.push({ i, score: 0 }));
  }
  // Best first; equal scores newest first (docs are in creation order).
  scored.sort((a, b) => b.score - a.score || b.i - a.i);
  const semantic = deps.semantic && queryTerms.size > 0 && docs.length > 0 ? await deps.semantic(view.userId, query) : undefined;
  if (semantic !== undefined) {
    const at = new Map(docs.map((d, i) => [factSeq(d.entry.id)!, i]));
    const lexical = scored.filter((s) => s.score > 0).map((s) => s.i);
    const vector = semantic.map((seq) => at.get(seq)).filter((i): i is number => i !== undefined);
    const fused = reciprocalRankFusion([lexical, vector]);
    const inFusion = new Set(fused.map(([i]) => i));
    scored.splice(0, scored.length, ...fused.map(([i, score]) => ({ i, score })), ...scored.filter((s) => !inFusion.has(s.i)).map((s) => ({ i: s.i, score: 0 })));
  }
  const out: RankedFact[] = [];
  let left = budget;
  for (const { i, score } of scored) {
    if (out.length >= limit || left <= 0) break;
    const entry = docs[i]!.entry;
    const tokens = count(entry.text) + 1;
    if (tokens > left) continue;
    out.push({ entry, score, tokens });
    left -= tokens;
  }
  return out;
}

export interface LongTermContext {
  /** The `[LONG_TERM]` section's body; `''` when there is nothing to inject. */
  text: string;
  /** Its o200k tokens. */
  tokens: number;
  /** The seqs of the entries shown, or `'all'` when the whole document went in. */
  shown: ReadonlySet<number> | 'all';
}

export async function longTermContext(deps: { semantic?: FactSemantic | undefined }, view: FactsView, query: string, options: RankOptions = {}): Promise<LongTermContext> {
  const budget = options.tokenBudget ?? DEFAULT_LONG_TERM_TOKENS;
  const count = await textTokens();
  // Every entry costs at least one token: past `budget` entries the document cannot fit.
  if (view.current.size <= budget) {
    const document = renderDocument(view).trim();
    const tokens = count(document);
    if (tokens <= budget) return { text: document, tokens, shown: 'all' };
  }
  const ranked = await rankFacts(deps, view, query, options);
  const text = ranked.map((r) => r.entry.text).join('\n');
  return { text, tokens: count(text), shown: new Set(ranked.map((r) => factSeq(r.entry.id)!)) };
}

/** o200k tokens of a text (no message framing). */
export async function textTokens(): Promise<(text: string) => number> {
  const counter = await o200kTokenCounter();
  const framing = counter({ role: 'user', content: '' });
  return (text: string) => (text === '' ? 0 : counter({ role: 'user', content: text }) - framing);
}
