import { defineConfig } from 'vitest/config';

/**
 * The recall suites that reach the layered memory only through its storage port (the
 * `openRecall` fixture, the public API), run a second time on the PostgreSQL adapter. The
 * others test the LMDB adapter itself (its databases, crash repair, the search pool), or make
 * their own stores.
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
