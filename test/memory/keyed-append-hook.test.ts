import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createInMemoryStore, createLmdbStore, type ClosableLog } from '../../src/memory/index.ts';
import type { StoredMessage } from '../../src/message.ts';

// One AppendOptions carries both idempotencyKey and onNumbered: a keyed batch calls its hook
// when it is stored, and a retry answered from its key does not (its hook's writes were made
// with the first attempt; running them again would store them twice).

const user = (content: string) => ({ role: 'user' as const, content });

const backends: Array<[string, () => { log: ClosableLog; dispose(): void }]> = [
  ['createInMemoryStore', () => ({ log: createInMemoryStore(), dispose: () => {} })],
  [
    'createLmdbStore',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'mnemo-keyed-hook-'));
      return { log: createLmdbStore({ path: dir }), dispose: () => rmSync(dir, { recursive: true, force: true }) };
    },
  ],
];

describe.each(backends)('%s: a keyed append with an onNumbered hook', (_name, make) => {
  it('calls the hook for the stored batch only, not for a retry under the same key', async () => {
    const { log, dispose } = make();
    try {
      const seen: number[][] = [];
      const onNumbered = (records: readonly StoredMessage[]) => seen.push(records.map((r) => r.message_id));
      const first = await log.append('c', [{ message: user('a') }], { idempotencyKey: 'k', onNumbered });
      const retry = await log.append('c', [{ message: user('a') }], { idempotencyKey: 'k', onNumbered });
      await log.append('c', [{ message: user('b') }], { idempotencyKey: 'k2', onNumbered });
      expect(retry).toEqual(first);
      expect(seen).toEqual([[1], [2]]);
      expect(await log.lastId('c')).toBe(2);
    } finally {
      await log.close();
      dispose();
    }
  });

  it('refuses an onNumbered that is not a function with invalid_option, storing nothing', async () => {
    const { log, dispose } = make();
    try {
      const bad = { onNumbered: 'x' } as unknown as Parameters<ClosableLog['append']>[2];
      const code = await log.append('c', [{ message: user('a') }], bad).catch((e: { code: string }) => e.code);
      expect(code).toBe('invalid_option');
      expect(await log.lastId('c')).toBe(0);
    } finally {
      await log.close();
      dispose();
    }
  });
});
