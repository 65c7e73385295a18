import { beforeAll } from 'vitest';
import { createPostgresStore } from '../../src/memory/postgres/index.ts';
import { describeMessageLogContract } from '../../src/testing.ts';
import { dropSchema, freshSchema, postgresUrl, SERVER_START_TIMEOUT } from '../support/postgres-server.ts';

let url: string;
beforeAll(async () => {
  url = await postgresUrl();
}, SERVER_START_TIMEOUT);

describeMessageLogContract('createPostgresStore', async ({ clock }) => {
  const schema = freshSchema('contract');
  const store = createPostgresStore({ connectionString: url, schema, clock });
  return {
    log: store,
    close: async () => {
      await store.close();
      await dropSchema(url, schema);
    },
  };
});
