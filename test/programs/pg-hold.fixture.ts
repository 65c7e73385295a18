// One PostgreSQL test for test/postgres/server-hold.test.ts's inner `vitest run`
// (test/programs/pg-hold.vitest.config.ts): it starts or reuses the shared server as any test does.
import { expect, it } from 'vitest';
import { postgresUrl, SERVER_START_TIMEOUT, sql } from '../support/postgres-server.ts';

it(
  'reaches the server',
  async () => {
    expect(await sql(await postgresUrl(), 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
  },
  SERVER_START_TIMEOUT,
);
