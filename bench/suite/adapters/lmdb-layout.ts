/**
 * The conversation key both LMDB adapters use: recall's session conversation id
 * (`session/{user}/{session}`), so Mnemo's keyword search reads the records the other workloads
 * wrote, and raw lmdb-js stores byte-for-byte the same keys.
 */
export const BENCH_USER = 'bench';

export function lmdbKeyOf(conversation: string): string {
  return `session/${BENCH_USER}/${conversation}`;
}
