import type { AdapterFactory, AdapterId } from '../types.ts';

/**
 * Imports one adapter's module only, so a child process that measures startup pays for the
 * store it uses and nothing else.
 */
export async function loadAdapter(id: AdapterId): Promise<AdapterFactory> {
  switch (id) {
    case 'raw-lmdb':
      return (await import('./raw-lmdb.ts')).rawLmdb;
    case 'mnemo-lmdb':
      return (await import('./mnemo.ts')).mnemoLmdb;
    case 'mnemo-store':
      return (await import('./mnemo.ts')).mnemoStore;
    case 'mnemo-memory':
      return (await import('./mnemo.ts')).mnemoMemory;
    case 'jsonl':
      return (await import('./jsonl.ts')).jsonl;
    case 'sqlite':
      return (await import('./sqlite.ts')).sqlite;
    case 'langgraph-memory':
      return (await import('./langgraph.ts')).langgraphMemory;
    case 'langgraph-sqlite':
      return (await import('./langgraph.ts')).langgraphSqlite;
    case 'mnemo-postgres':
      return (await import('./postgres.ts')).mnemoPostgres;
    case 'sqlite-fts5':
    case 'minisearch':
      throw new Error(`${id} is a search peer (ranked workload), not a log store`);
  }
}
