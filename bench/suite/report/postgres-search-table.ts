/**
 * The table of `bench/postgres-search.ts` (ranked search on PostgreSQL beside LMDB and
 * `ts_rank_cd`): the run's shape, its Markdown, and where it goes in docs/guides/postgresql.md
 * (between `SEARCH_BEGIN` and `SEARCH_END`, rewritten by `npx tsx bench/figures.ts`).
 */
import type { LatencySummary } from '../stats.ts';

export const SEARCH_BEGIN = '<!-- postgres-search:begin (rendered by `npx tsx bench/figures.ts` from bench/results/postgres-search.json) -->';
export const SEARCH_END = '<!-- postgres-search:end -->';

export type SearchSystem = 'mnemo-postgres' | 'mnemo-lmdb' | 'ts_rank_cd';
export type QueryClass = 'mid+mid' | 'rare+common' | 'common+common';
export const QUERY_CLASSES: readonly QueryClass[] = ['mid+mid', 'rare+common', 'common+common'];
export type UserKind = 'big' | 'typical';

export interface SizeResult {
  size: number;
  users: number;
  bigUserMessages: number;
  typicalUserMessages: number;
  loadMs: Partial<Record<SearchSystem, number>>;
  bytes: Partial<Record<SearchSystem, number>>;
  cells: {
    system: SearchSystem;
    user: UserKind;
    queries: QueryClass;
    latency: LatencySummary;
    /** Mean a query: this process's CPU; the database server's CPU and its processes' wait for a core (when measured). */
    cpu?: { clientMs: number; databaseMs?: number; databaseWaitMs?: number };
  }[];
  /** Queries whose PostgreSQL top 10 equals LMDB's (rows and scores), of all asked. */
  pgEqualsLmdb: { equal: number; of: number };
  /** Of BM25's top-10 rows, the share ts_rank_cd's top 10 holds too. */
  tsRankOverlap: number;
}

export interface PostgresSearchRun {
  date: string;
  command: string;
  node: string;
  cpus: number;
  loadavg: number[];
  bigShare: number;
  queriesPerCell: number;
  sizes: SizeResult[];
}

const ms = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(1));

/** The run as Markdown: p50 / p95 per cell, then the agreement lines. */
export function renderPostgresSearch(run: PostgresSearchRun): string {
  const lines = [
    `Ranked search, top 10, p50 / p95 ms, ${run.queriesPerCell} queries a cell (\`${run.command}\`, ${run.date.slice(0, 10)}, Node ${run.node.replace(/^v/, '')}, ${run.cpus} cores, load average ${run.loadavg.map((x) => x.toFixed(1)).join(' ')}):`,
    '',
    '| messages | user (its messages) | query | Mnemo PostgreSQL | Mnemo LMDB | `ts_rank_cd` + GIN |',
    '| --: | --- | --- | --: | --: | --: |',
  ];
  for (const s of run.sizes) {
    for (const user of ['big', 'typical'] as const) {
      for (const cls of QUERY_CLASSES) {
        const cell = (system: SearchSystem) => {
          const c = s.cells.find((x) => x.system === system && x.user === user && x.queries === cls);
          return c === undefined ? '' : `${ms(c.latency.p50Ms)} / ${ms(c.latency.p95Ms)}`;
        };
        const who = user === 'big' ? `big (${s.bigUserMessages.toLocaleString('en')})` : `typical (${s.typicalUserMessages.toLocaleString('en')})`;
        lines.push(`| ${s.size.toLocaleString('en')} | ${who} | ${cls} | ${cell('mnemo-postgres')} | ${cell('mnemo-lmdb')} | ${cell('ts_rank_cd')} |`);
      }
    }
  }
  if (run.sizes.some((s) => s.cells.some((c) => c.cpu?.databaseMs !== undefined))) {
    lines.push(
      '',
      'CPU a query, mean ms: the benchmark process + the database server (and the server\'s wait for a core):',
      '',
      '| messages | user | query | Mnemo PostgreSQL | Mnemo LMDB | `ts_rank_cd` + GIN |',
      '| --: | --- | --- | --: | --: | --: |',
    );
    for (const s of run.sizes) {
      for (const user of ['big', 'typical'] as const) {
        for (const cls of QUERY_CLASSES) {
          const cell = (system: SearchSystem) => {
            const c = s.cells.find((x) => x.system === system && x.user === user && x.queries === cls)?.cpu;
            if (c === undefined) return '';
            return system === 'mnemo-lmdb' || c.databaseMs === undefined ? ms(c.clientMs) : `${ms(c.clientMs)} + ${ms(c.databaseMs)} (${ms(c.databaseWaitMs ?? 0)})`;
          };
          lines.push(`| ${s.size.toLocaleString('en')} | ${user} | ${cls} | ${cell('mnemo-postgres')} | ${cell('mnemo-lmdb')} | ${cell('ts_rank_cd')} |`);
        }
      }
    }
  }
  lines.push('');
  for (const s of run.sizes) {
    lines.push(
      `At ${s.size.toLocaleString('en')} messages (${s.users} users): PostgreSQL's top 10 equal to LMDB's (rows and scores) in ${s.pgEqualsLmdb.equal} of ${s.pgEqualsLmdb.of} queries; ` +
        `\`ts_rank_cd\`'s top 10 holds ${(s.tsRankOverlap * 100).toFixed(0)}% of BM25's.`,
    );
  }
  return lines.join('\n');
}

/** `page` with the run's table between its markers. */
export function withSearchTable(page: string, table: string): string {
  const begin = page.indexOf(SEARCH_BEGIN);
  const end = page.indexOf(SEARCH_END);
  if (begin === -1 || end < begin) throw new Error('the page has no postgres-search markers');
  return `${page.slice(0, begin + SEARCH_BEGIN.length)}\n${table}\n${page.slice(end)}`;
}
