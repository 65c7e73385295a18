import type { DailyRow, MemoryRow } from './memory-row.ts';

/** A keyword search handed to a pool worker. Workers only read; LMDB writes never go there. */
export type SearchJob =
  | { kind: 'daily'; path: string; userId: string; day: string | null; keyword: string; limit: number }
  | { kind: 'session'; path: string; conversationId: string; keyword: string; limit: number };

export type SearchResult<J extends SearchJob> = J extends { kind: 'daily' } ? DailyRow[] : MemoryRow[];
