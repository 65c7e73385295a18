import { createHash } from 'node:crypto';
import type { PoolClient, QueryConfig } from 'pg';

/**
 * The adapter's parameterized statements as NAMED prepared statements: PostgreSQL parses and
 * plans each once per connection, not at every call (an unnamed statement is parsed and planned
 * each time, most of a short statement's cost: a chat turn sends ~28). The name is a hash of the
 * text, so one text is one statement on every connection, and the set stays bounded: the texts
 * are templates whose only variables are the schema and `$n` parameters (never inlined values).
 * Plain texts without parameters (`BEGIN`, `COMMIT`) and configs pass as they are.
 */
const names = new Map<string, string>();

export function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `mr_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
  }
  return name;
}

/** `text` with `values` as a named statement's config. */
export function prepared(text: string, values: readonly unknown[]): QueryConfig {
  return { name: statementName(text), text, values: values as unknown[] };
}

const PREPARING = Symbol('mnemo.preparing');

/** The client, its `query(text, values)` sent as named statements from now on (idempotent). */
export function preparing(client: PoolClient): PoolClient {
  const c = client as PoolClient & { [PREPARING]?: true };
  if (c[PREPARING] === true) return client;
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (c as unknown as { query: (...args: unknown[]) => unknown }).query = (text: unknown, values?: unknown, ...rest: unknown[]) =>
    typeof text === 'string' && Array.isArray(values) && values.length > 0 ? query(prepared(text, values), ...rest) : query(text, values, ...rest);
  c[PREPARING] = true;
  return client;
}
