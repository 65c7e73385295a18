import type { MatchCondition } from '@langchain/langgraph-checkpoint';

/**
 * `listNamespaces` selection, as LangGraph's InMemoryStore does it: every condition must hold
 * (`prefix`: the namespace starts with the path; `suffix`: it ends with it; `'*'` matches any
 * one label), then namespaces are cut to `maxDepth` labels and deduplicated, sorted, and paged
 * with `offset`/`limit`.
 */
export function selectNamespaces(
  paths: Iterable<string>,
  op: { readonly matchConditions?: readonly MatchCondition[] | undefined; readonly maxDepth?: number | undefined; readonly limit?: number; readonly offset?: number },
): string[][] {
  const conditions = op.matchConditions ?? [];
  const selected = new Map<string, string[]>();
  for (const path of paths) {
    let labels = path.split(':');
    if (!conditions.every((c) => matches(c, labels))) continue;
    if (op.maxDepth !== undefined) labels = labels.slice(0, op.maxDepth);
    selected.set(labels.join(':'), labels);
  }
  const sorted = [...selected.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, labels]) => labels);
  const offset = op.offset ?? 0;
  return sorted.slice(offset, offset + (op.limit ?? sorted.length));
}

function matches(condition: MatchCondition, labels: readonly string[]): boolean {
  const { matchType, path } = condition;
  if (path.length > labels.length) return false;
  const at = matchType === 'prefix' ? 0 : labels.length - path.length;
  return path.every((p, i) => p === '*' || labels[at + i] === p);
}
