import { randomBytes } from 'node:crypto';

/**
 * A fresh conversation id in beamai's `gen_id("conv")` format:
 * `conv_<12 hex digits of the epoch ms>_<20 hex random digits>`.
 */
export function newConversationId(now: number = Date.now()): string {
  const ms = now.toString(16).padStart(12, '0').slice(-12);
  return `conv_${ms}_${randomBytes(10).toString('hex')}`;
}
