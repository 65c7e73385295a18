import type { AdapterId } from '../types.ts';
import type { LiveAnswer } from './live-conversations.ts';

/** What the parent asks a child process to measure, and what it answers (one JSON line). */
export type ChildTask =
  | { kind: 'restart'; adapter: AdapterId; dir: string; conversation: string; window: number }
  | { kind: 'rss'; adapter: AdapterId; dir: string; touched: number; concurrency: number; capSeconds: number }
  | { kind: 'live'; dir: string; conversations: number; census: boolean };

export interface RestartAnswer {
  kind: 'restart';
  /** Importing the adapter's modules (the store's library and Mnemo's code). */
  importMs: number;
  /** Opening the store on the existing data. */
  openMs: number;
  /** Open + the first tail read returning. */
  firstReadMs: number;
  /** Process start (time origin) to the first read returning: node, tsx, imports, open, read. */
  sinceProcessStartMs: number;
  messagesRead: number;
}

export interface RssAnswer {
  kind: 'rss';
  /** Conversations actually touched (fewer than asked when the time cap hit). */
  touched: number;
  baselineRss: number;
  rss: number;
  baselineHeap: number;
  heapUsed: number;
  external: number;
}

export type ChildAnswer = RestartAnswer | RssAnswer | LiveAnswer;
export type { LiveAnswer };
