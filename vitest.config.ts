import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A PostgreSQL server the run starts is stopped at its end (test/support/postgres-global-setup.ts).
    globalSetup: ['test/support/postgres-global-setup.ts'],
    // LMDB is a native module: separate processes keep each suite's environment its own.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
