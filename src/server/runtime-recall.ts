/**
 * The recall service over a running runtime: session transcripts in the runtime's message
 * store, everything else in named databases of the same LMDB environment.
 *
 * Interim: the runtime is to own this (start it with the tree, close it before the store) and
 * expose it as `runtime.recall`; then this file goes. Close order meanwhile: the HTTP server,
 * then `recall.close()` (refuses new calls, waits for running ones), then `runtime.stop()`.
 */
import type { LlmService } from '../llm/index.ts';
import { createRecall, type Recall, type WallClock } from '../recall/index.ts';
import type { Runtime } from '../runtime.ts';
import { ConfigError } from './config-error.ts';

export function recallOnRuntime(runtime: Runtime, options: { llm?: LlmService; clock?: WallClock } = {}): Recall {
  const storage = runtime.storage;
  if (storage.kind !== 'lmdb') {
    throw new ConfigError(`the recall service needs LMDB storage, this runtime has ${storage.kind}`);
  }
  return createRecall({
    memory: runtime.memory,
    env: { root: storage.root, path: storage.path },
    ...(options.llm === undefined ? {} : { llm: options.llm }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
}
