/**
 * The memory context of one turn, exactly as the demo builds it (reference §3.5): sections
 * `[SESSION]`, `[DAILY]`, `[LONG_TERM]` in that order, each only when non-empty, rows as
 * `{role}: {content}`, joined with `\n`; `''` when all three are empty.
 *
 * Mnemo's one addition: once the session has a rolling summary (recall's `summary` option, on
 * by default), its latest comes first, as `[SUMMARY]` (its text), before `[SESSION]`: the
 * summary covers the older part of the session, the rows after it are the recent part. A
 * session with none gets the Demo's context exactly.
 */
export interface ContextRow {
  role: string;
  content: string;
}

export interface MemoryContext {
  session: readonly ContextRow[];
  daily: readonly ContextRow[];
  /** The long-term document, `''` when there is none. */
  longTerm: string;
  /** The session's latest rolling summary; absent or `''`: no `[SUMMARY]` section. */
  summary?: string;
}

export function buildPromptContext(ctx: MemoryContext): string {
  const lines: string[] = [];
  if (ctx.summary !== undefined && ctx.summary !== '') lines.push('[SUMMARY]', ctx.summary);
  if (ctx.session.length > 0) {
    lines.push('[SESSION]', ...ctx.session.map((r) => `${r.role}: ${r.content}`));
  }
  if (ctx.daily.length > 0) {
    lines.push('[DAILY]', ...ctx.daily.map((r) => `${r.role}: ${r.content}`));
  }
  if (ctx.longTerm !== '') lines.push('[LONG_TERM]', ctx.longTerm);
  return lines.join('\n');
}
