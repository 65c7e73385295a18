import { beforeAll } from 'vitest';
import { createPostgresStore } from '../../src/memory/postgres/index.ts';
import { startRuntime } from '../../src/runtime.ts';
import { describeMessageLogContract } from '../../src/testing.ts';
import { dropSchema, freshSchema, postgresUrl, SERVER_START_TIMEOUT } from '../fixtures/postgres-server.ts';

// The PostgreSQL store under a runtime, behind the per-conversation actors (short idle time,
// so some tests also cross passivations): the same contract as standalone.
let url: string;
beforeAll(async () => {
  url = await postgresUrl();
}, SERVER_START_TIMEOUT);

describeMessageLogContract('runtime.memory over createPostgresStore', async ({ clock }) => {
  const schema = freshSchema('runtime');
  const store = createPostgresStore({ connectionString: url, schema, clock });
  const runtime = await startRuntime({ name: `pg_${schema}`, storage: { store }, idleMs: 5 });
  return {
    log: runtime.memory,
    close: async () => {
      await runtime.stop();
      await store.close();
      await dropSchema(url, schema);
    },
  };
});
