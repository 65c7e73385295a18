import { mkdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { StorageError } from '../contract/memory-errors.ts';

/**
 * One process per data directory. Conversation actors number messages in memory, so two
 * processes writing one LMDB environment would race for ids (`write_conflict`); a second process
 * is refused at open with `data_dir_locked`, naming the holder, instead.
 *
 * The lock is an owner record in a tiny LMDB environment of its own beside the data
 * (`owner.mdb` in the data directory, so the data file's pages are not touched), read and set in
 * one synchronous write transaction: LMDB's writer mutex (a robust, process-shared mutex in
 * `owner.mdb-lock`) makes the check-and-set atomic across processes, and a holder that died is
 * detected, not waited for: a record whose process is gone (no such pid, a zombie, a pid reused
 * by a process started at another time, or a record from before the last boot) is taken over.
 * The last release in the process removes the record and closes the owner environment.
 */
export const OWNER_FILE = 'owner.mdb';
const OWNER_KEY = 'owner';

interface OwnerRecord {
  pid: number;
  hostname: string;
  /** /proc/sys/kernel/random/boot_id, when the OS has it. */
  bootId?: string;
  /** The process's start time in clock ticks since boot (/proc/<pid>/stat), when the OS has it. */
  startTicks?: number;
  since: string;
  /** Tells this open from a later one of the same process (a reopen during a close). */
  nonce: string;
}

export interface DataDirLock {
  /** Removes the owner record if it is still this process's (a write in the current batch). */
  release(): Promise<void>;
}

/** Takes the directory for this process, or throws `data_dir_locked` naming the live holder. */
export function lockDataDir(path: string): DataDirLock {
  mkdirSync(path, { recursive: true });
  const db: RootDatabase<OwnerRecord, string> = open({ path: join(path, OWNER_FILE), noSubdir: true, maxDbs: 1 });
  const me = thisProcess();
  const holder = db.transactionSync(() => {
    const current = db.get(OWNER_KEY);
    if (current !== undefined && !sameProcess(current, me) && alive(current)) return current;
    db.putSync(OWNER_KEY, me);
    return undefined;
  });
  if (holder !== undefined) {
    closeLater(db);
    throw new StorageError(
      'data_dir_locked',
      `data directory ${path} is in use by process ${holder.pid} on ${holder.hostname} (since ${holder.since}); ` +
        'one LMDB data directory serves one process: stop that process, give this one another data directory, ' +
        'or share memory between processes with the PostgreSQL backend (startRuntime({ storage: { postgres: url } }))',
      { path, pid: holder.pid, hostname: holder.hostname, since: holder.since },
    );
  }
  let released: Promise<void> | undefined;
  return { release: () => (released ??= releaseOwner(db, me)) };
}

async function releaseOwner(db: RootDatabase<OwnerRecord, string>, me: OwnerRecord): Promise<void> {
  // Synchronous: a failed asynchronous commit (a full disk) would leave lmdb-js's batch promise
  // unhandled (see lmdb-environment.ts); this one throws here instead.
  try {
    db.transactionSync(() => {
      if (db.get(OWNER_KEY)?.nonce === me.nonce) db.removeSync(OWNER_KEY);
    });
  } catch {
    // The next opener detects a dead holder anyway.
  }
  await new Promise((r) => setTimeout(r, 0));
  await db.close();
}

/** Closing in the turn of a sync transaction can hang lmdb 3.5.6: close a turn later. */
function closeLater(db: RootDatabase<OwnerRecord, string>): void {
  setTimeout(() => void db.close().catch(() => undefined), 0);
}

let opens = 0;

function thisProcess(): OwnerRecord {
  const bootId = readBootId();
  const startTicks = readStartTicks(process.pid)?.startTicks;
  return {
    pid: process.pid,
    hostname: hostname(),
    ...(bootId !== undefined ? { bootId } : {}),
    ...(startTicks !== undefined ? { startTicks } : {}),
    since: new Date().toISOString(),
    // Unique within the process, which is all it has to be (node:crypto stays unloaded at open).
    nonce: `${process.pid}.${++opens}.${process.hrtime.bigint()}`,
  };
}

function sameProcess(a: OwnerRecord, b: OwnerRecord): boolean {
  return a.pid === b.pid && a.hostname === b.hostname && a.bootId === b.bootId && a.startTicks === b.startTicks;
}

/** Whether the record's process still runs (on this host; a record of another host counts as alive). */
function alive(record: OwnerRecord): boolean {
  if (record.hostname !== hostname()) return true;
  const bootId = readBootId();
  if (record.bootId !== undefined && bootId !== undefined && record.bootId !== bootId) return false;
  try {
    process.kill(record.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    // EPERM: it exists, owned by another user.
  }
  const stat = readStartTicks(record.pid);
  if (stat === undefined) return true;
  if (stat.state === 'Z' || stat.state === 'X') return false;
  return record.startTicks === undefined || stat.startTicks === record.startTicks;
}

function readBootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Fields 3 (state) and 22 (start time) of /proc/<pid>/stat; the name (field 2) may hold spaces. */
function readStartTicks(pid: number): { state: string; startTicks: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const startTicks = Number(fields[19]);
    return Number.isFinite(startTicks) ? { state: fields[0] ?? '', startTicks } : undefined;
  } catch {
    return undefined;
  }
}
