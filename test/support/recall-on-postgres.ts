/**
 * Setup of vitest's `recall-postgres` project (vitest.config.ts): the recall suites that test
 * the layered memory through its storage port run again with `MNEMO_RECALL_ENGINE=postgres`, so
 * `openRecall` (recall-fixture.ts) gives them the PostgreSQL adapter in a fresh schema. The
 * fixture is synchronous, so the server's url is made known here, before the file runs: the
 * shared server of `MNEMO_PG_URL`, else the one `scripts/postgres.sh start` brings up (held and
 * released with the run, postgres-global-setup.ts).
 */
import { afterAll } from 'vitest';
import { SERVER_START_TIMEOUT, dropSchema, postgresUrl } from './postgres-server.ts';
import { keptSchemas } from './recall-fixture.ts';

const started = postgresUrl();
const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('PostgreSQL did not start in time')), SERVER_START_TIMEOUT).unref());
process.env['MNEMO_PG_URL'] = await Promise.race([started, timeout]);

// The schemas `openRecall({ dir })` kept for a reopen go with the file.
afterAll(async () => {
  for (const schema of keptSchemas) await dropSchema(process.env['MNEMO_PG_URL']!, schema);
  keptSchemas.clear();
});
