/**
 * Renders the headline figures of bench/results/latest.json into the pages that show current
 * figures (README.md and docs/benchmarks.md, between their figures markers), and the table of
 * bench/results/postgres-search.json (`bench/postgres-search.ts`) into docs/guides/postgresql.md.
 *
 *   npx tsx bench/figures.ts           # rewrite the pages
 *   npx tsx bench/figures.ts --check   # exit 1, naming the pages, when they differ from the results
 *
 * Run it after a full run of the suite (`npm run bench -- --full`) has written latest.json, or
 * bench/postgres-search.ts its results.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RunResult } from './suite/result-types.ts';
import { renderHeadline, withHeadline } from './suite/report/headline.ts';
import { renderPostgresSearch, withSearchTable, type PostgresSearchRun } from './suite/report/postgres-search-table.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Each page and how it links to every table. */
export const FIGURE_PAGES: ReadonlyArray<{ page: string; more: string }> = [
  { page: 'README.md', more: '[docs/benchmarks.md](docs/benchmarks.md)' },
  { page: 'docs/benchmarks.md', more: '[bench/results/latest.md](../bench/results/latest.md)' },
];

/** Each page's text as the results render it, beside its text now. */
export function renderedPages(root = ROOT): Array<{ page: string; now: string; rendered: string }> {
  const run = JSON.parse(readFileSync(`${root}/bench/results/latest.json`, 'utf8')) as RunResult;
  return FIGURE_PAGES.map(({ page, more }) => {
    const now = readFileSync(`${root}/${page}`, 'utf8');
    return { page, now, rendered: withHeadline(now, renderHeadline(run, more)) };
  });
}

/** The PostgreSQL guide with the table of bench/results/postgres-search.json, beside its text now. */
export const SEARCH_PAGE = 'docs/guides/postgresql.md';
export function renderedSearchPage(root = ROOT): { page: string; now: string; rendered: string } {
  const run = JSON.parse(readFileSync(`${root}/bench/results/postgres-search.json`, 'utf8')) as PostgresSearchRun;
  const now = readFileSync(`${root}/${SEARCH_PAGE}`, 'utf8');
  return { page: SEARCH_PAGE, now, rendered: withSearchTable(now, renderPostgresSearch(run)) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const stale = [...renderedPages(), renderedSearchPage()].filter((p) => p.now !== p.rendered);
  if (process.argv.includes('--check')) {
    if (stale.length > 0) {
      console.error(`figures differ from bench/results/latest.json: ${stale.map((p) => p.page).join(', ')} (run npx tsx bench/figures.ts)`);
      process.exit(1);
    }
  } else {
    for (const p of stale) writeFileSync(`${ROOT}/${p.page}`, p.rendered);
    console.log(stale.length === 0 ? 'figures up to date' : `rewrote ${stale.map((p) => p.page).join(', ')}`);
  }
}
