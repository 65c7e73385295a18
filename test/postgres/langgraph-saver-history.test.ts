/** MnemoSaver's single-writer semantics on PostgreSQL (a fresh schema per test): test/langgraph/saver-history-suite.ts. */
import { MnemoSaver } from '../../src/langgraph/index.ts';
import { describeSaverHistory } from '../langgraph/saver-history-suite.ts';
import { dropSchema, freshSchema, postgresUrl } from '../support/postgres-server.ts';

let url = '';
let schema = '';

describeSaverHistory('MnemoSaver on PostgreSQL', {
  setUp: async () => {
    url = await postgresUrl();
    schema = freshSchema('lgh');
  },
  open: () => new MnemoSaver({ postgres: url, schema }),
  tearDown: () => dropSchema(url, schema),
});
