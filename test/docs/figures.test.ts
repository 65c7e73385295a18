import { describe, expect, it } from 'vitest';
import { FIGURE_PAGES, renderedPages, renderedSearchPage } from '../../bench/figures.ts';
import { BEGIN, END, HEADLINES, NOT_MEASURED } from '../../bench/suite/report/headline.ts';

// The pages that show current figures carry them as bench/results/latest.json renders them:
// a run of the suite, then `npx tsx bench/figures.ts`, is the only way a figure changes.

describe('the headline figures of README.md and docs/benchmarks.md', () => {
  const pages = renderedPages();

  it('are rendered between markers on each page', () => {
    expect(pages.map((p) => p.page)).toEqual(FIGURE_PAGES.map((p) => p.page));
    for (const p of pages) {
      const table = p.rendered.slice(p.rendered.indexOf(BEGIN), p.rendered.indexOf(END));
      // One row per headline (header and rule aside): a Mnemo figure and a ratio, or, when the
      // run did not measure it, dashes and "not in this run".
      const rows = table.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| workload '));
      expect(rows).toHaveLength(HEADLINES.length);
      for (const row of rows) expect(row).toMatch(new RegExp(`^\\| .* \\| ([\\d,.]+ \\|.*x \\((ahead|behind)\\)|– \\| .* – \\| ${NOT_MEASURED}) \\|$`));
      expect(table).toMatch(/Node \d+\.\d+\.\d+/);
    }
  });

  it('match bench/results/latest.json (npx tsx bench/figures.ts rewrites them)', () => {
    for (const p of pages) expect(p.now, p.page).toBe(p.rendered);
  });
});

describe('the ranked-search table of docs/guides/postgresql.md', () => {
  it('matches bench/results/postgres-search.json (npx tsx bench/postgres-search.ts, then npx tsx bench/figures.ts)', () => {
    const p = renderedSearchPage();
    expect(p.rendered).toMatch(/\| 1,000,000 \| big/);
    expect(p.now).toBe(p.rendered);
  });
});
