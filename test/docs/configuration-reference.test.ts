import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './docs-pages.ts';
import { propertyNames, publicApi, type PublicApi } from './public-api.ts';

// docs/reference/configuration.md against the option types: every field of each is named
// (as `field`) in its section of the page.

const PAGE = readFileSync(join(ROOT, 'docs', 'reference', 'configuration.md'), 'utf8');

/** The text under a heading (any level), to the next heading of the same or a higher level. */
function section(title: string): string {
  const match = new RegExp(`^(#+) ${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm').exec(PAGE);
  if (match === null) throw new Error(`no heading "${title}"`);
  const level = match[1]!.length;
  const rest = PAGE.slice(match.index + match[0].length);
  const next = new RegExp(`^#{1,${level}} `, 'm').exec(rest);
  return next === null ? rest : rest.slice(0, next.index);
}

const SECTIONS: [heading: string, entry: string, type: string, skip?: string[]][] = [
  ['startRuntime', 'mnemo', 'RuntimeOptions'],
  ['lmdb', 'mnemo', 'LmdbStoreOptions'],
  ['retention', 'mnemo', 'RetentionOptions'],
  ['recall', 'mnemo', 'RecallOptions'],
  ['recall', 'mnemo', 'RuntimeRecallOptions'],
  ['recall.summary', 'mnemo', 'RecallSummaryOptions'],
  ['recall.extraction', 'mnemo', 'ExtractionRetryOptions'],
  ['recall.embeddings', 'mnemo', 'EmbeddingsOptions'],
  ['recall.limits', 'mnemo', 'RecallLimits'],
  ['startServer', 'mnemo/server', 'ServerOptions'],
  // `path` and `clock` are named in the Stores table, which sends the rest here.
  ['Agents and providers', 'mnemo', 'AgentConfig'],
];

let api: PublicApi;
beforeAll(() => {
  api = publicApi();
}, 120_000);

describe('docs/reference/configuration.md', () => {
  for (const [heading, entry, type] of SECTIONS) {
    it(`names every field of ${type} under "${heading}"`, () => {
      const text = section(heading) + (heading === 'lmdb' ? section('Stores') : '');
      const fields = propertyNames(api, entry, type);
      expect(fields.length).toBeGreaterThan(0);
      expect(fields.filter((f) => !text.includes(`\`${f}\``))).toEqual([]);
    });
  }
});
