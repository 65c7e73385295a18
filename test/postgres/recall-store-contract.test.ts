import { createPostgresStore } from '../../src/memory/postgres/index.ts';
import { createPostgresRecallStore } from '../../src/postgres.ts';
import { describeRecallStoreContract } from '../../src/testing.ts';
import { dropSchema, freshSchema, postgresUrl, SERVER_START_TIMEOUT } from '../support/postgres-server.ts';
import { beforeAll } from 'vitest';

/**
 * The storage port's conformance suite (`describeRecallStoreContract`, mnemo/testing) on the
 * PostgreSQL adapter, as the runtime opens it: the message store (the session transcripts,
 * stamped by the suite's clock) and the recall tables in one fresh schema per store. The job
 * queue reckons time by the database's clock, which the suite allows for (it waits in real time too).
 */
let url: string;
beforeAll(async () => {
  url = await postgresUrl();
}, SERVER_START_TIMEOUT);

describeRecallStoreContract('postgres', async ({ clock, embeddings }) => {
  const schema = freshSchema('recall_contract');
  const transcripts = createPostgresStore({ connectionString: url, schema, clock });
  const store = createPostgresRecallStore({ transcripts, embeddings });
  return {
    store,
    async close() {
      await store.close();
      await transcripts.close();
      await dropSchema(url, schema);
    },
  };
});
