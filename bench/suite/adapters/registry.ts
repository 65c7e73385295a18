import type { AdapterFactory, AdapterId } from '../types.ts';
import { jsonl } from './jsonl.ts';
import { langgraphMemory, langgraphSqlite } from './langgraph.ts';
import { mnemoLmdb, mnemoMemory, mnemoStore } from './mnemo.ts';
import { mnemoPostgres } from './postgres.ts';
import { rawLmdb } from './raw-lmdb.ts';
import { sqlite } from './sqlite.ts';

/** Every adapter, in the order tables and charts list them. */
export const ADAPTERS: readonly AdapterFactory[] = [rawLmdb, mnemoLmdb, mnemoStore, mnemoMemory, jsonl, sqlite, langgraphMemory, langgraphSqlite, mnemoPostgres];

export function adapterById(id: AdapterId): AdapterFactory {
  const found = ADAPTERS.find((a) => a.info.id === id);
  if (found === undefined) throw new Error(`unknown adapter ${id}`);
  return found;
}
