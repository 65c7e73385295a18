/**
 * LangGraph's own conformance suite for checkpointers (@langchain/langgraph-checkpoint-validation)
 * and its delta-channel history suite, run whole against MnemoSaver on PostgreSQL (the real
 * server, a fresh schema per checkpointer). The package's specs use vitest's globals, so they
 * are installed before the suite is defined.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MnemoSaver } from '../../src/langgraph/index.ts';
import { dropSchema, freshSchema, postgresUrl } from '../support/postgres-server.ts';

Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it });
const { validate, deltaChannelHistoryTests } = await import('@langchain/langgraph-checkpoint-validation');

const schemas = new Map<MnemoSaver, string>();

const initializer = {
  checkpointerName: 'MnemoSaver (PostgreSQL)',
  createCheckpointer: async () => {
    const schema = freshSchema('lgv');
    const saver = new MnemoSaver({ postgres: await postgresUrl(), schema });
    schemas.set(saver, schema);
    return saver;
  },
  destroyCheckpointer: async (saver: MnemoSaver) => {
    await saver.close();
    await dropSchema(await postgresUrl(), schemas.get(saver)!);
    schemas.delete(saver);
  },
};

validate(initializer);
deltaChannelHistoryTests(initializer);
