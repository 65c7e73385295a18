/** node:crypto loads on first use: it is ~25 ms of a cold import (docs/performance-history.md). */
const crypto = () => process.getBuiltinModule('node:crypto');

/**
 * A fresh conversation id in beamai's `gen_id("conv")` format:
 * `conv_<12 hex digits of the epoch ms>_<20 hex random digits>`.
 */
export function newConversationId(now: number = Date.now()): string {
  const ms = now.toString(16).padStart(12, '0').slice(-12);
  return `conv_${ms}_${crypto().randomBytes(10).toString('hex')}`;
}
