/**
 * src/langgraph: LangGraph.js persistence on Mnemo. `MnemoSaver` (a checkpointer) and
 * `MnemoStore` (a long-term store) keep their data in Mnemo's storage, LMDB or PostgreSQL,
 * through a storage port each (storage/). This is the only layer that imports `@langchain/*`:
 * the core never needs them.
 *
 * @module mnemo/langgraph
 */
export { MnemoSaver, FORK_KEY, type MnemoSaverOptions, type MnemoSaverSettings } from './mnemo-saver.ts';
export { CheckpointConflictError, type CheckpointConflictReason } from './langgraph-errors.ts';
export type { LmdbSource } from './storage/lmdb/lmdb-source.ts';
export type { LangGraphSource, PostgresSource } from './storage/langgraph-source.ts';
export { MnemoStore, type MnemoStoreOptions, type MnemoStoreSettings } from './mnemo-store.ts';
