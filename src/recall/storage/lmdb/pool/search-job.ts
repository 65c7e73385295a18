import type { StoredMessage } from '../../../../message.ts';
import type { DailyRecord } from '../../../records/records.ts';

/** A keyword search handed to a pool worker. Workers only read; LMDB writes never go there. */
export type SearchJob =
  /** `after`: resume newest-first after this key (what an inline scan already covered). */
  | { kind: 'daily'; path: string; userId: string; day: string | null; keyword: string; limit: number; after?: DailyKey }
  /** `before`: only ids below it (the newer ones were scanned inline). */
  | { kind: 'session'; path: string; conversationId: string; keyword: string; limit: number; before?: number };

export type DailyKey = [string, string, number];

export type SearchResult<J extends SearchJob> = J extends { kind: 'daily' } ? DailyRecord[] : StoredMessage[];
