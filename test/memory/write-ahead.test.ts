import { closeSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterAll, describe, expect, it } from 'vitest';
import { createLmdbStore } from '../../src/memory/index.ts';
import { acquireEnvironment } from '../../src/memory/lmdb/lmdb-environment.ts';
import { JOURNAL_FILE, JOURNAL_INITIAL_BYTES, openJournal, preallocateJournal, readJournal, type Journal } from '../../src/memory/lmdb/journal.ts';
import { MESSAGES_DB } from '../../src/memory/lmdb/lmdb-table.ts';
import { runAndKill } from '../support/kill-child.ts';
import { tempDir } from '../support/runtime-fixtures.ts';

// The write-ahead journal (src/memory/lmdb/journal.ts, write-ahead.ts): an append is
// acknowledged once it is in the journal, LMDB takes it later, and everything in between reads
// it; what LMDB lacks after a crash is put from the journal at the next open.

const dirs: Array<{ remove(): void }> = [];
afterAll(() => dirs.forEach((d) => d.remove()));
const fresh = () => {
  const d = tempDir('mnemo-journal-');
  dirs.push(d);
  return d.path;
};
const user = (content: string) => ({ message: { role: 'user' as const, content } });
/** Appends `payload` to `journal`: its seq, and when it is on the device. */
const append = (journal: Journal, payload: string) => {
  let told!: (error?: unknown) => void;
  const durable = new Promise<void>((resolve, reject) => (told = (error) => (error === undefined ? resolve() : reject(error))));
  const seq = journal.append(payload, told);
  if (seq === undefined) throw new Error('the journal refused the record');
  return { seq, durable };
};
/** Rows of `messages` as LMDB itself holds them (another read handle on the same environment). */
const lmdbRows = (path: string, c: string) => {
  const lease = acquireEnvironment(path);
  try {
    return [...lease.root.openDB<unknown, [string, number]>(MESSAGES_DB, { encoding: 'json' }).getKeys({ start: [c, 1], end: [c, Infinity] })].length;
  } finally {
    void lease.release();
  }
};

describe.each([
  { mode: 'through O_DIRECT where the file system has it', direct: true },
  { mode: 'through the page cache', direct: false },
])('the journal file, $mode', ({ direct }) => {
  it('reads back its records in order, and drops a torn last one', async () => {
    const file = join(fresh(), JOURNAL_FILE);
    expect(preallocateJournal(file, 64 * 1024)).toBe(true);
    expect(statSync(file).size).toBe(64 * 1024);
    const journal = openJournal(file, 1, async () => undefined, 64 * 1024, direct);
    const durable = ['one', 'two', 'three'].map((text) => append(journal, text));
    expect(durable.map((d) => d.seq)).toEqual([1, 2, 3]);
    await Promise.all(durable.map((d) => d.durable));
    journal.close();
    expect(readJournal(file).map((r) => [r.seq, r.payload.toString()])).toEqual([
      [1, 'one'],
      [2, 'two'],
      [3, 'three'],
    ]);
    // A flipped byte in the last record's payload: its checksum fails, the two before stand.
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.from('T'), 0, 1, 24 * 3 + 'one'.length + 'two'.length);
    closeSync(fd);
    expect(readJournal(file).map((r) => r.payload.toString())).toEqual(['one', 'two']);
  });

  it('starts over at offset 0 once every record is released, so older bytes behind the new run are not read', async () => {
    const file = join(fresh(), JOURNAL_FILE);
    preallocateJournal(file, 64 * 1024);
    const first = openJournal(file, 1, async () => undefined, 64 * 1024, direct);
    for (const text of ['a1', 'a2', 'a3', 'a4']) await append(first, text).durable;
    first.close();
    // Reopened after all four were put elsewhere: numbering goes on, writing starts at 0.
    const second = openJournal(file, 5, async () => undefined, 64 * 1024, direct);
    await append(second, 'b5').durable;
    second.close();
    expect(readJournal(file).map((r) => [r.seq, r.payload.toString()])).toEqual([[5, 'b5']]);
  });

  it('asks for room when a flush would pass the end, and goes on from 0 once it is given', async () => {
    const file = join(fresh(), JOURNAL_FILE);
    const bytes = 16 * 1024;
    preallocateJournal(file, bytes);
    let asked = 0;
    let last = 0;
    const journal = openJournal(
      file,
      1,
      async () => {
        asked++;
        journal.release(last);
      },
      bytes,
      direct,
    );
    const payload = 'x'.repeat(900);
    for (let i = 0; i < 40; i++) {
      const { seq, durable } = append(journal, payload);
      await durable;
      last = seq;
    }
    journal.close();
    expect(asked).toBeGreaterThan(0);
    const live = readJournal(file);
    expect(live.at(-1)!.seq).toBe(40);
    expect(live.map((r) => r.seq)).toEqual(Array.from({ length: live.length }, (_, i) => 40 - live.length + 1 + i));
  });

  it('writes the records appended while a flush waits for room with it, in order', async () => {
    const file = join(fresh(), JOURNAL_FILE);
    const bytes = 16 * 1024;
    preallocateJournal(file, bytes);
    let last = 0;
    const journal = openJournal(
      file,
      1,
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        journal.release(last);
      },
      bytes,
      direct,
    );
    for (const ch of ['a', 'b', 'c', 'd', 'e']) await append(journal, ch.repeat(3000)).durable;
    last = 5;
    // Past the end: this flush waits for room, and the two made meanwhile go with it.
    const waiting = append(journal, 'f'.repeat(3000));
    await new Promise((resolve) => setImmediate(resolve));
    const later = ['g', 'h'].map((ch) => append(journal, ch.repeat(3000)));
    expect(journal.waiting).toBe(3);
    await Promise.all([waiting.durable, ...later.map((r) => r.durable)]);
    journal.close();
    expect(readJournal(file).map((r) => [r.seq, r.payload.toString()[0]])).toEqual([
      [6, 'f'],
      [7, 'g'],
      [8, 'h'],
    ]);
  });

  it('takes text as UTF-8, and refuses a record larger than its largest payload', async () => {
    const file = join(fresh(), JOURNAL_FILE);
    preallocateJournal(file, 64 * 1024);
    const journal = openJournal(file, 1, async () => undefined, 64 * 1024, direct);
    const text = 'ünïcødé 🧠 '.repeat(500);
    await append(journal, text).durable;
    expect(journal.append('x'.repeat(journal.maxPayload + 1), () => undefined)).toBeUndefined();
    expect(journal.append('🧠'.repeat(journal.maxPayload / 4 + 1), () => undefined)).toBeUndefined();
    await append(journal, 'after').durable;
    journal.close();
    expect(readJournal(file).map((r) => [r.seq, r.payload.toString('utf8')])).toEqual([
      [1, text],
      [2, 'after'],
    ]);
  });

  it('grows a smaller journal of an earlier version without losing its records', async () => {
    const file = join(fresh(), JOURNAL_FILE);
    preallocateJournal(file, 64 * 1024);
    const old = openJournal(file, 1, async () => undefined, 64 * 1024, direct);
    for (const text of ['kept 1', 'kept 2']) await append(old, text).durable;
    old.close();
    expect(preallocateJournal(file, 256 * 1024)).toBe(true);
    expect(statSync(file).size).toBe(256 * 1024);
    expect(readJournal(file).map((r) => r.payload.toString())).toEqual(['kept 1', 'kept 2']);
  });

  it('grows while its records are not released (no wait for room), and a clean close with all released truncates it to 64 KiB', async () => {
    const file = join(fresh(), JOURNAL_FILE);
    preallocateJournal(file, 16 * 1024);
    let asked = 0;
    const journal = openJournal(file, 1, async () => void asked++, 256 * 1024, direct);
    const payload = 'y'.repeat(900);
    for (let i = 0; i < 100; i++) await append(journal, payload).durable;
    expect(asked).toBe(0);
    expect(statSync(file).size).toBe(128 * 1024);
    expect(readJournal(file).map((r) => r.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    journal.release(100);
    journal.close();
    expect(statSync(file).size).toBe(JOURNAL_INITIAL_BYTES);
  });

  it('keeps its grown size and every record at a close with records not released', async () => {
    const file = join(fresh(), JOURNAL_FILE);
    preallocateJournal(file, 16 * 1024);
    const journal = openJournal(file, 1, async () => undefined, 256 * 1024, direct);
    for (let i = 0; i < 100; i++) await append(journal, 'z'.repeat(900)).durable;
    journal.release(99);
    journal.close();
    expect(statSync(file).size).toBe(128 * 1024);
    expect(readJournal(file)).toHaveLength(100);
  });

  it('is not made where it cannot be preallocated', () => {
    expect(preallocateJournal(join(fresh(), 'no-such-dir', JOURNAL_FILE))).toBe(false);
  });
});

describe('appends through the journal, before LMDB has them', () => {
  it('are acknowledged, read by every read, and numbered on from', async () => {
    const path = fresh();
    const store = createLmdbStore({ path, journalDelay: 60_000 });
    try {
      await store.append('c', [{ message: { role: 'system', content: 'be brief' } }]);
      await store.append('c', [user('one'), user('two')], { idempotencyKey: 'k' });
      await store.append('c', [user('three')]);
      expect(lmdbRows(path, 'c')).toBe(0);
      expect(await store.lastId('c')).toBe(4);
      expect((await store.tail('c', 2)).map((r) => r.message.content)).toEqual(['two', 'three']);
      expect((await store.range('c', { from: 2, to: 3 })).map((r) => r.message_id)).toEqual([2, 3]);
      expect((await store.get('c')).map((m) => m.content)).toEqual(['be brief', 'one', 'two', 'three']);
      expect((await store.systemMessages('c')).map((r) => r.message.content)).toEqual(['be brief']);
      // A retry under the key is answered from the pending rows, not stored again.
      expect((await store.append('c', [user('one'), user('two')], { idempotencyKey: 'k' })).map((r) => r.message_id)).toEqual([2, 3]);
      expect(await store.lastId('c')).toBe(4);
      // A caller's copy is its own.
      const [got] = await store.tail('c', 1);
      (got!.message as { content: string }).content = 'changed';
      expect((await store.tail('c', 1))[0]!.message.content).toBe('three');
    } finally {
      await store.close();
    }
    // Closing puts them in LMDB.
    expect(lmdbRows(path, 'c')).toBe(4);
  });

  it('are left to the group commit of LMDB while many conversations append at once, and taken again once few do', async () => {
    const path = fresh();
    const store = createLmdbStore({ path, journalDelay: 60_000 });
    const inLmdb = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => lmdbRows(path, `${prefix}${i}`)).reduce((a, b) => a + b, 0);
    try {
      // 600 at once: the first ones fill the journal's next write, the rest commit straight to LMDB.
      await Promise.all(Array.from({ length: 600 }, (_, i) => store.append(`a${i}`, [user('one')])));
      const first = inLmdb('a', 600);
      expect(first).toBeGreaterThan(0);
      expect(first).toBeLessThan(600);
      // That round was crowded: the next one goes straight to LMDB whole.
      await Promise.all(Array.from({ length: 600 }, (_, i) => store.append(`b${i}`, [user('one')])));
      expect(inLmdb('b', 600)).toBe(600);
      // One writer alone: its first append ends the crowded round, its second is journaled.
      await store.append('alone', [user('one')]);
      expect(lmdbRows(path, 'alone')).toBe(1);
      await store.append('alone', [user('two')]);
      expect(lmdbRows(path, 'alone')).toBe(1);
      expect((await store.tail('alone', 2)).map((r) => r.message.content)).toEqual(['one', 'two']);
    } finally {
      await store.close();
    }
    expect(lmdbRows(path, 'alone')).toBe(2);
  });

  it('grow the journal from 64 KiB while LMDB has not taken them, and a close leaves it at 64 KiB with every row in LMDB', async () => {
    const path = fresh();
    const file = join(path, JOURNAL_FILE);
    const store = createLmdbStore({ path, journalDelay: 60_000 });
    try {
      await store.append('warm', [user('first')]);
      expect(statSync(file).size).toBe(JOURNAL_INITIAL_BYTES);
      // ~300 KB of appends, one at a time (each journaled), none in LMDB yet.
      for (let i = 0; i < 300; i++) await store.append('c', [user(`${i} ${'w'.repeat(1000)}`)]);
      expect(lmdbRows(path, 'c')).toBe(0);
      expect(statSync(file).size).toBeGreaterThan(300 * 1000);
      expect(await store.lastId('c')).toBe(300);
    } finally {
      await store.close();
    }
    expect(statSync(file).size).toBe(JOURNAL_INITIAL_BYTES);
    expect(lmdbRows(path, 'c')).toBe(300);
  });

  it('are removed by a clear and do not come back when LMDB takes the batch', async () => {
    const path = fresh();
    const store = createLmdbStore({ path, journalDelay: 60_000 });
    try {
      await store.append('c', [user('gone')]);
      await store.clear('c');
      expect(await store.lastId('c')).toBe(0);
      await store.append('c', [user('kept')]);
    } finally {
      await store.close();
    }
    const again = createLmdbStore({ path });
    try {
      expect((await again.get('c')).map((m) => m.content)).toEqual(['kept']);
    } finally {
      await again.close();
    }
  });

  it('are the prefix a fork sees', async () => {
    const store = createLmdbStore({ path: fresh(), journalDelay: 60_000 });
    try {
      await store.append('src', [user('a'), user('b'), user('c')]);
      await store.fork('src', 2, 'branch');
      await store.append('branch', [user('b2')]);
      expect((await store.get('branch')).map((m) => m.content)).toEqual(['a', 'b', 'b2']);
    } finally {
      await store.close();
    }
  });

  it('survive a SIGKILL of the writer: the next open puts what LMDB lacks, at the acknowledged ids', async () => {
    const path = fresh();
    const writer = join(import.meta.dirname, '../programs/journal-kill-writer.ts');
    const lines = await runAndKill(writer, [path], 400);
    const acks = lines.filter((l) => l.startsWith('ack ')).map((l) => l.split(' '));
    expect(acks.length).toBeGreaterThan(6);
    // LMDB itself lacks the last of them (the journal holds appends for a minute, or until 1,024
    // are waiting): read without Mnemo.
    const raw = open({ path, readOnly: true });
    const rows = raw.openDB<unknown, [string, number]>({ name: MESSAGES_DB, encoding: 'json' });
    const missing = acks.filter(([, conversation, id]) => rows.get([conversation!, Number(id)]) === undefined);
    await raw.close();
    expect(missing.length).toBeGreaterThan(0);
    expect(missing).toContainEqual(acks.at(-1));
    expect(readFileSync(join(path, JOURNAL_FILE)).includes('conv-1.0.a')).toBe(true);

    const store = createLmdbStore({ path });
    try {
      for (const [, conversation, id, content] of acks) {
        const [record] = await store.range(conversation!, { from: Number(id), to: Number(id) });
        expect(record?.message.content, `${conversation} ${id}`).toBe(content);
      }
      for (let c = 0; c < 3; c++) {
        const all = await store.range(`conv-${c}`);
        expect(all.map((r) => r.message_id)).toEqual(all.map((_, i) => i + 1));
      }
      expect((await store.systemMessages('conv-0')).map((r) => r.message.content)).toEqual(['conv-0.0.a']);
      // A keyed append retried after the crash is answered from the replayed rows.
      const keyed = acks.find((a) => a[4] !== '-')!;
      const retried = await store.append(keyed[1]!, [user('retry a'), user('retry b')], { idempotencyKey: keyed[4]! });
      expect(retried.map((r) => r.message.content)).toEqual(acks.filter((a) => a[4] === keyed[4]).map((a) => a[3]));
    } finally {
      await store.close();
    }
    // Put once: a second open finds nothing left to put, and the rows are LMDB's own.
    expect(lmdbRows(path, 'conv-0')).toBeGreaterThan(0);
  });

  it('left by a killed writer are put at the next open with noSync too', async () => {
    const path = fresh();
    const lines = await runAndKill(join(import.meta.dirname, '../programs/journal-kill-writer.ts'), [path], 200);
    const last = lines.filter((l) => l.startsWith('ack ')).at(-1)!.split(' ');
    const store = createLmdbStore({ path, noSync: true });
    try {
      expect((await store.range(last[1]!, { from: Number(last[2]), to: Number(last[2]) }))[0]?.message.content).toBe(last[3]);
    } finally {
      await store.close();
    }
  });

  it('is off with noSync: appends commit straight to LMDB, and no journal file is made', async () => {
    const path = fresh();
    const store = createLmdbStore({ path, noSync: true });
    try {
      await store.append('c', [user('direct')]);
      expect(lmdbRows(path, 'c')).toBe(1);
    } finally {
      await store.close();
    }
    expect(() => statSync(join(path, JOURNAL_FILE))).toThrow();
  });
});

describe('lmdb.journalDelay', () => {
  it('refuses a delay that is not a number of ms a timer takes, with InvalidInputError, opening nothing', () => {
    for (const bad of [-1, Number.NaN, Infinity, 2 ** 31, '20']) {
      const path = fresh();
      expect(() => createLmdbStore({ path, journalDelay: bad as number }), String(bad)).toThrow(/journalDelay/);
      expect(() => statSync(join(path, JOURNAL_FILE))).toThrow();
    }
  });
});
