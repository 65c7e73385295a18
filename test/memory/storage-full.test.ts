import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLmdbStore, StorageError } from '../../src/memory/index.ts';
import { startRuntime } from '../../src/runtime.ts';
import { diskRoom, FLOOR_BYTES, HEADROOM_BYTES } from '../../src/memory/lmdb/disk-room.ts';
import { acquireEnvironment } from '../../src/memory/lmdb/lmdb-environment.ts';
import { MnemoSaver, MnemoStore } from '../../src/langgraph/index.ts';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';

// lmdb-js grows the memory map by itself (a patch in its bundled LMDB), so MDB_MAP_FULL does not
// happen: `mapSize` is a starting size. The limits that exist are the disk and the file size
// limit. Mnemo refuses a write before LMDB meets either (disk-room.ts: lmdb-js 3.5.6 corrupts
// its heap on a failed page write), so each refusal here must come from that check: its
// details name the headroom kept.

const kib = (n: number) => 'k'.repeat(n * 1024);

describe('map size', () => {
  it('is only a starting size: a tiny map grows as data arrives', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-map-'));
    const store = createLmdbStore({ path: dir, mapSize: 64 * 1024 });
    try {
      for (let i = 0; i < 40; i++) await store.append('c', Array.from({ length: 10 }, () => ({ message: { role: 'user' as const, content: kib(5) } })));
      expect(await store.lastId('c')).toBe(400);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A 2 MiB tmpfs, when this process may mount one (root with CAP_SYS_ADMIN); else skipped. */
const mountPoint = mkdtempSync(join(tmpdir(), 'mnemo-tmpfs-'));
const canMount = (() => {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mountPoint], { stdio: 'ignore' });
    execFileSync('umount', [mountPoint], { stdio: 'ignore' });
    return true;
  } catch {
    rmSync(mountPoint, { recursive: true, force: true });
    return false;
  }
})();

// A fresh file system per test. (LMDB maps its lock file: opening an environment on a disk that
// is already full would kill the process with SIGBUS; acquireEnvironment refuses first.)
describe.skipIf(!canMount)('a full disk (2 MiB tmpfs)', () => {
  beforeEach(() => void execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mountPoint]));
  afterEach(() => void execFileSync('umount', [mountPoint]));
  afterAll(() => rmSync(mountPoint, { recursive: true, force: true }));

  it('rejects the batch with storage_full, stores none of it, and takes writes again after a clear', async () => {
    const dir = join(mountPoint, 'store');
    mkdirSync(dir);
    const store = createLmdbStore({ path: dir });
    let acked = 0;
    let error: unknown;
    for (let batch = 0; error === undefined && batch < 1000; batch++) {
      await store.append('big', Array.from({ length: 10 }, (_, i) => ({ message: { role: 'user' as const, content: `${batch}.${i} ${kib(1)}` } }))).then(
        (records) => void (acked = records[9]!.message_id),
        (e: unknown) => void (error = e),
      );
    }
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).code).toBe('storage_full');
    expect((error as StorageError).details['headroom']).toBe(HEADROOM_BYTES);
    expect(await store.lastId('big')).toBe(acked);
    expect((await store.tail('big', 1))[0]!.message_id).toBe(acked);
    await store.clear('big');
    const [record] = await store.append('big', [{ message: { role: 'user', content: 'room again' } }]);
    expect(record!.message_id).toBe(1);
    await store.close();
  });

  it('through the runtime: the conversation actor reports storage_full and keeps serving', async () => {
    const dir = join(mountPoint, 'runtime');
    mkdirSync(dir);
    const runtime = await startRuntime({ dataDir: dir, name: 'full' });
    const session = await runtime.recall.createSession('u');
    await runtime.recall.chat({ userId: 'u', sessionId: session, message: 'hello' });
    const exits: string[] = [];
    runtime.events.subscribe((e) => void (e.type === 'exit' && exits.push(JSON.stringify(e.reason))));
    let error: unknown;
    let acked = 0;
    for (let batch = 0; error === undefined && batch < 1000; batch++) {
      await runtime.memory.append('big', Array.from({ length: 10 }, () => ({ message: { role: 'user' as const, content: kib(1) } }))).then(
        (records) => void (acked = records[9]!.message_id),
        (e: unknown) => void (error = e),
      );
    }
    expect((error as StorageError).code).toBe('storage_full');
    expect((error as StorageError).details['headroom']).toBe(HEADROOM_BYTES);
    expect(exits).toEqual([]); // a full disk is an answer, not a crash
    // Removals are never refused: they are how room is made.
    await expect(runtime.recall.deleteSession('u', session)).resolves.toBe(true);
    await runtime.memory.clear('big');
    const [record] = await runtime.memory.append('big', [{ message: { role: 'user', content: 'room again' } }]);
    expect(record!.message_id).toBe(1);
    expect(acked).toBeGreaterThan(0);
    await runtime.stop();
  });

  it('takes turns again once half of the conversations are deleted: the pages they held inside data.mdb are room', async () => {
    const dir = join(mountPoint, 'recover');
    mkdirSync(dir);
    const runtime = await startRuntime({ dataDir: dir, name: 'recover' });
    const sessions: string[] = [];
    let error: unknown;
    for (let i = 0; error === undefined && i < 2000; i++) {
      if (i % 4 === 0) sessions.push(await runtime.recall.createSession('u'));
      await runtime.recall.chat({ userId: 'u', sessionId: sessions.at(-1)!, message: `${i} ${kib(2)}` }).catch((e: unknown) => void (error = e));
    }
    expect(causes(error).some((c) => c instanceof StorageError && c.code === 'storage_full')).toBe(true);
    for (const session of sessions.filter((_, i) => i % 2 === 0)) await runtime.recall.deleteSession('u', session);
    const fresh = await runtime.recall.createSession('u');
    const turns = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => runtime.recall.chat({ userId: 'u', sessionId: fresh, message: `again ${i} ${kib(2)}` })));
    expect(turns.map((t) => t.status)).toEqual(Array(5).fill('fulfilled'));
    // Until the freed pages are used up: refused again, with the floor still on the disk.
    error = undefined;
    for (let i = 0; error === undefined && i < 2000; i++) {
      await runtime.recall.chat({ userId: 'u', sessionId: fresh, message: `more ${i} ${kib(2)}` }).catch((e: unknown) => void (error = e));
    }
    expect(causes(error).some((c) => c instanceof StorageError && c.code === 'storage_full')).toBe(true);
    expect(free()).toBeGreaterThanOrEqual(FLOOR_BYTES);
    await runtime.stop();
  });

  it('gives back the room of every write once stored: appends and clears over and over never come to storage_full', async () => {
    // 16 MiB: room for the write-ahead journal (4 MiB), so both paths run: the journal's (one
    // writer) and LMDB's direct commits (hundreds of conversations at once).
    execFileSync('mount', ['-o', 'remount,size=16m', 'tmpfs', mountPoint]);
    const dir = join(mountPoint, 'cycles');
    mkdirSync(dir);
    const store = createLmdbStore({ path: dir });
    const batch = () => Array.from({ length: 10 }, () => ({ message: { role: 'user' as const, content: kib(1) } }));
    const crowd = Array.from({ length: 300 }, (_, i) => `c${i}`);
    try {
      // Each cycle takes room for ~3.8 MiB (estimates: ~40 KiB a batch of the one writer, ~12 KiB
      // an append of the crowd), ~11 MiB are spare: room kept after its write would refuse the
      // rest within three cycles.
      for (let cycle = 0; cycle < 12; cycle++) {
        for (let i = 0; i < 10; i++) await store.append('one', batch());
        await Promise.all(crowd.map((c) => store.append(c, [{ message: { role: 'user', content: kib(1) } }])));
        expect(await store.lastId('one')).toBe(100);
        await store.clear('one');
        for (const c of crowd) await store.clear(c);
      }
    } finally {
      await store.close();
    }
  });

  it('LangGraph: the store and the saver take room too, and keep serving after storage_full', async () => {
    const store = new MnemoStore({ path: join(mountPoint, 'lg-store') });
    let error: unknown;
    let stored = 0;
    for (let i = 0; error === undefined && i < 100; i++) {
      await store.put(['docs'], `d${i}`, { text: kib(100) }).then(() => void stored++, (e: unknown) => void (error = e));
    }
    expect(error).toMatchObject({ code: 'storage_full', details: { headroom: HEADROOM_BYTES } });
    expect(stored).toBeGreaterThan(0);
    expect((await store.get(['docs'], 'd0'))?.value).toEqual({ text: kib(100) });
    await store.delete(['docs'], 'd0'); // a removal is not refused
    expect(await store.get(['docs'], 'd0')).toBeNull();
    await store.close();

    const saver = new MnemoSaver({ path: join(mountPoint, 'lg-saver') });
    const config = { configurable: { thread_id: 't', checkpoint_ns: '' } };
    const big = { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { notes: kib(1024) }, channel_versions: { notes: 1 } };
    await expect(saver.put(config, big, { source: 'loop', step: 0, parents: {} }, { notes: 1 })).rejects.toMatchObject({
      code: 'storage_full',
      details: { headroom: HEADROOM_BYTES },
    });
    const small = { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { notes: 'short' }, channel_versions: { notes: 1 } };
    const saved = await saver.put(config, small, { source: 'loop', step: 0, parents: {} }, { notes: 1 });
    expect((await saver.getTuple(saved))?.checkpoint.channel_values).toEqual({ notes: 'short' });
    await saver.close();
  });

  it('room: refuses what would leave less than the headroom, takes nothing then, and sees room freed on the file system at once', () => {
    const room = diskRoom(mountPoint);
    const filler = join(mountPoint, 'filler');
    appendFileSync(filler, Buffer.alloc(512 * 1024));
    const spare = free() - HEADROOM_BYTES;
    expect(spare).toBeGreaterThan(64 * 1024);
    // Taken in flight (nothing written yet) counts as used: three quarters, then a half, is too much.
    room.take(Math.floor(spare * 0.75));
    expect(() => room.take(Math.floor(spare / 2))).toThrow(expect.objectContaining({ code: 'storage_full', details: expect.objectContaining({ headroom: HEADROOM_BYTES }) }));
    room.take(Math.floor(spare / 8)); // the refused take took nothing
    room.release(Math.floor(spare * 0.75) + Math.floor(spare / 8));
    // Written, not just taken: the file system's own count.
    appendFileSync(filler, Buffer.alloc(Math.ceil(spare / 4096) * 4096));
    expect(() => room.take(4096)).toThrow(expect.objectContaining({ code: 'storage_full' }));
    rmSync(filler);
    expect(() => room.take(4096)).not.toThrow();
  });

  it('room: free pages inside data.mdb carry writes, as far as the disk keeps FLOOR_BYTES should LMDB grow the file instead', async () => {
    const dir = join(mountPoint, 'pages');
    mkdirSync(dir);
    const lease = acquireEnvironment(dir, { noSync: true });
    try {
      const db = lease.root.openDB<string, number>('t', { encoding: 'json' });
      await db.transaction(() => {
        for (let i = 0; i < 200; i++) db.put(i, kib(3));
      });
      await db.transaction(() => {
        for (let i = 0; i < 200; i++) db.remove(i);
      });
      // The disk: the headroom and 64 KiB.
      const filler = join(mountPoint, 'filler');
      const fill = (toLeave: number) => appendFileSync(filler, Buffer.alloc(Math.floor((free() - toLeave) / 4096) * 4096));
      fill(HEADROOM_BYTES + 64 * 1024);
      expect(() => diskRoom(dir).take(256 * 1024)).toThrow(expect.objectContaining({ code: 'storage_full' })); // the disk alone
      lease.room.take(256 * 1024);
      let refused: unknown;
      try {
        lease.room.take(HEADROOM_BYTES - FLOOR_BYTES);
      } catch (e) {
        refused = e;
      }
      // ~700 KiB of free pages (200 values of 3 KiB removed), but in flight at most what the disk takes over its floor.
      expect(refused).toMatchObject({ code: 'storage_full', details: { free_pages: expect.any(Number) } });
      expect((refused as StorageError).details['free_pages']).toBeGreaterThan(512 * 1024);
      lease.room.release(256 * 1024);
      // Nearly at the floor: the free pages carry nothing (LMDB might grow the file instead).
      fill(FLOOR_BYTES + 16 * 1024);
      expect(() => lease.room.take(32 * 1024)).toThrow(expect.objectContaining({ code: 'storage_full' }));
      lease.room.take(8 * 1024);
      lease.room.release(8 * 1024);
    } finally {
      await lease.release();
    }
  });

  it('refuses to open a new environment on a full disk with storage_full instead of dying of SIGBUS', async () => {
    const filler = join(mountPoint, 'filler');
    try {
      for (;;) appendFileSync(filler, Buffer.alloc(64 * 1024));
    } catch (e) {
      expect((e as NodeJS.ErrnoException).code).toBe('ENOSPC');
    }
    const opening = (() => {
      try {
        return createLmdbStore({ path: join(mountPoint, 'store') });
      } catch (e) {
        return e;
      }
    })();
    expect(opening).toBeInstanceOf(StorageError);
    expect((opening as StorageError).code).toBe('storage_full');
    const started = await startRuntime({ dataDir: join(mountPoint, 'runtime'), name: 'full-at-start' }).catch((e: unknown) => e);
    expect(causes(started).some((c) => c instanceof StorageError && c.code === 'storage_full')).toBe(true);
  });
});

function free(): number {
  const s = statfsSync(mountPoint);
  return s.bavail * s.bsize;
}

function causes(error: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = error; e !== undefined && out.length < 10; e = (e as { cause?: unknown }).cause) out.push(e);
  return out;
}

describe('a file size limit (ulimit -f, in a child process)', () => {
  it('fails the commit with a typed error, stores none of the batch, and takes writes again after a clear', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-fsize-'));
    try {
      const fixture = join(import.meta.dirname, '../programs/file-size-limit-writer.ts');
      const tsx = join(import.meta.dirname, '../../node_modules/.bin/tsx');
      // 4096 blocks of 1 KiB: LMDB's data file may not grow past 4 MiB.
      const run = spawnSync('bash', ['-c', `ulimit -f 4096; exec "${tsx}" "${fixture}" "${dir}"`], { encoding: 'utf8', timeout: 60_000 });
      const line = run.stdout.trim().split('\n').pop()!;
      const result = JSON.parse(line) as {
        acked: number;
        failure: { code: string; headroom: unknown } | undefined;
        lastIdAfterFailure: number;
        failedBatchStored: boolean;
        afterClear: number | string;
      };
      expect(result.failure?.code).toBe('storage_full');
      expect(result.failure?.headroom).toBe(HEADROOM_BYTES); // refused before LMDB met the limit
      expect(result.acked).toBeGreaterThan(0);
      expect(result.lastIdAfterFailure).toBe(result.acked);
      expect(result.failedBatchStored).toBe(false);
      expect(result.afterClear).toBe(1);
      expect(run.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
