/** MnemoStore on PostgreSQL (the real server, a fresh schema per test): the shared suite, test/langgraph/store-suite.ts. */
import { MnemoStore } from '../../src/langgraph/index.ts';
import { describeMnemoStore } from '../langgraph/store-suite.ts';
import { dropSchema, freshSchema, postgresUrl } from '../support/postgres-server.ts';

let url = '';
let schema = '';

describeMnemoStore('MnemoStore on PostgreSQL', {
  setUp: async () => {
    url = await postgresUrl();
    schema = freshSchema('lgs');
  },
  open: (settings) => new MnemoStore({ postgres: url, schema, ...settings }),
  tearDown: () => dropSchema(url, schema),
});
