import type { MessageLog } from '../../src/memory/contract/message-log.ts';
import { createLmdbRecallStore, createRecall, type Recall, type RecallEnvironment, type RecallOptions, type SearchPool } from '../../src/recall/index.ts';

/** A recall service on the LMDB store of `env`, as the runtime builds one (the benches' standalone form). */
export function lmdbRecall(
  options: { memory: MessageLog; env: RecallEnvironment; pool?: SearchPool; poolThreshold?: number } & Partial<Omit<RecallOptions, 'store'>>,
): Recall {
  const { memory, env, pool, poolThreshold, ...service } = options;
  const store = createLmdbRecallStore({
    env,
    transcripts: memory,
    ...(pool === undefined ? {} : { pool }),
    ...(poolThreshold === undefined ? {} : { poolThreshold }),
    ...(service.embeddings === undefined ? {} : { embeddings: true }),
    ...(service.clock === undefined ? {} : { clock: service.clock }),
  });
  return createRecall({ ...service, store });
}
