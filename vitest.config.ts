import { defineConfig } from 'vitest/config';

/**
 * The recall suites that reach the layered memory only through its storage port (the
 * `openRecall` fixture, the public API), run a second time on the PostgreSQL adapter. Inside
 * them, a case of the LMDB adapter itself is `itLmdb` (skipped there). The recall suites not
 * listed test the LMDB adapter itself, or no store at all:
 * - crash repair, by killing real processes on a data directory: chat-kill, daily-repair-kill,
 *   embeddings-kill, first-turn-kill, summary-kill (PostgreSQL's kills: test/postgres/
 *   recall-processes, server-fleet);
 * - its search: the pool's worker threads (search-pool), the raw-text prefilter of its scans
 *   (search-scan), its index format and pending log beside the tokenizer's pure cases
 *   (search-index);
 * - its store over a running runtime's environment and pool (on-runtime);
 * - its conformance run (store-contract; PostgreSQL's: test/postgres/recall-store-contract).
 */
const RECALL_ON_POSTGRES = [
  'chat-idempotency',
  'chat-stream',
  'chat-turn',
  'concurrency',
  'daily-mirror',
  'demo-folder',
  'demo-rules',
  'embeddings',
  'facts',
  'language',
  'long-term-memory',
  'memory-tools',
  'ranked-search',
  'recall-limits',
  'recall-search',
  'record-turn',
  'retrieval-quality',
  'search-page',
  'search-route',
  'session-summary',
  'user-erasure',
  'user-isolation',
].map((name) => `test/recall/${name}.test.ts`);

export default defineConfig({
  test: {
    // A PostgreSQL server the run starts is stopped at its end (test/support/postgres-global-setup.ts).
    globalSetup: ['test/support/postgres-global-setup.ts'],
    // LMDB is a native module: separate processes keep each suite's environment its own.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'main', include: ['test/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'recall-postgres',
          include: RECALL_ON_POSTGRES,
          env: { MNEMO_RECALL_ENGINE: 'postgres' },
          setupFiles: ['test/support/recall-on-postgres.ts'],
        },
      },
    ],
  },
});
