import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createInMemoryStore, createLmdbStore, type ClosableLog } from '../../src/memory/index.ts';
import { IDEMPOTENCY_WINDOW_MS } from '../../src/memory/contract/idempotency.ts';

// The window of idempotency keys: honoured for 24 hours of the store's clock, then forgotten.

const user = (content: string) => ({ role: 'user' as const, content });

const backends: Array<[string, (clock: { now(): number }) => { log: ClosableLog; dispose(): void }]> = [
  ['createInMemoryStore', (clock) => ({ log: createInMemoryStore({ clock }), dispose: () => {} })],
  [
    'createLmdbStore',
    (clock) => {
      const dir = mkdtempSync(join(tmpdir(), 'mnemo-window-'));
      return { log: createLmdbStore({ path: dir, clock }), dispose: () => rmSync(dir, { recursive: true, force: true }) };
    },
  ],
];

describe.each(backends)('%s: the idempotency window', (_name, make) => {
  it('honours a key within 24 hours and stores a retry again after them', async () => {
    let now = Date.UTC(2026, 0, 1);
    const { log, dispose } = make({ now: () => now });
    try {
      await log.add('c', [user('a')], { idempotencyKey: 'k' });
      now += IDEMPOTENCY_WINDOW_MS - 1000;
      await log.add('c', [user('a')], { idempotencyKey: 'k' });
      expect(await log.lastId('c')).toBe(1);
      now += 2000;
      // A keyed write past the window also sweeps the expired keys.
      await log.add('other', [user('x')], { idempotencyKey: 'sweep' });
      const again = await log.append('c', [{ message: user('a') }], { idempotencyKey: 'k' });
      expect(again.map((r) => r.message_id)).toEqual([2]);
      const retry = await log.append('c', [{ message: user('a') }], { idempotencyKey: 'k' });
      expect(retry).toEqual(again);
    } finally {
      await log.close();
      dispose();
    }
  });
});
