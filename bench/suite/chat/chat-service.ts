/**
 * One chat turn with the offline fallback reply, as the chat workload drives it: the same
 * `(userId, sessionId, message)` in, a reply out, everything durable before it resolves.
 */
export interface ChatTurns {
  readonly label: string;
  readonly id: 'mnemo-lmdb' | 'jsonl';
  turn(userId: string, sessionId: string, message: string): Promise<string>;
  close(): Promise<void>;
}
