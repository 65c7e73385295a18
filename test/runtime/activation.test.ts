import { afterEach, describe, expect, it } from 'vitest';
import { whereis } from '../../src/otp/index.ts';
import { startRuntime } from '../../src/runtime.ts';
import type { StoredMessage } from '../../src/message.ts';
import { tempDir, user } from '../support/runtime-fixtures.ts';

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const actor = (c: string) => `mnemo/conversation/${c}`;

/** Appends one message and reports whether its write was issued before `append` returned. */
function appendNow(append: (onNumbered: (records: readonly StoredMessage[]) => void) => Promise<StoredMessage[]>) {
  let issued: number[] | undefined;
  const done = append((records) => (issued = records.map((r) => r.message_id)));
  return { issuedInCall: issued, done };
}

describe("a conversation's activation", () => {
  for (const storage of ['lmdb', 'memory'] as const) {
    it(`a new conversation's first write is issued within the call that made it (${storage})`, async () => {
      const dir = tempDir();
      const runtime = await startRuntime({ dataDir: dir.path, storage, recall: false });
      cleanup.push(dir.remove, () => runtime.stop());
      const first = appendNow((onNumbered) => runtime.memory.append('new', [{ message: user('1') }], { onNumbered }));
      expect(first.issuedInCall).toEqual([1]);
      expect(whereis(actor('new'))).toBeDefined();
      expect((await first.done).map((r) => r.message_id)).toEqual([1]);
    });
  }

  it('a stored conversation activated in a new runtime numbers on from its last id, in the first call', async () => {
    const dir = tempDir();
    cleanup.push(dir.remove);
    const before = await startRuntime({ dataDir: dir.path, recall: false });
    await before.memory.add('kept', [user('1'), user('2')]);
    await before.stop();
    const runtime = await startRuntime({ dataDir: dir.path, recall: false });
    cleanup.push(() => runtime.stop());
    const next = appendNow((onNumbered) => runtime.memory.append('kept', [{ message: user('3') }], { onNumbered }));
    expect(next.issuedInCall).toEqual([3]);
    await next.done;
    expect((await runtime.memory.range('kept')).map((r) => r.message_id)).toEqual([1, 2, 3]);
  });

  it('writes made in one turn to many new conversations keep their order in each', async () => {
    const dir = tempDir();
    const runtime = await startRuntime({ dataDir: dir.path, recall: false });
    cleanup.push(dir.remove, () => runtime.stop());
    const ids = Array.from({ length: 50 }, (_, i) => `c${i}`);
    const writes = ids.flatMap((id) => [1, 2, 3].map((n) => runtime.memory.append(id, [{ message: user(`${id}-${n}`) }])));
    await Promise.all(writes);
    for (const id of ids) {
      expect((await runtime.memory.range(id)).map((r) => [r.message_id, r.message.content])).toEqual([
        [1, `${id}-1`],
        [2, `${id}-2`],
        [3, `${id}-3`],
      ]);
    }
  });
});
