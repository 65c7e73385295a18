import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { RootDatabase } from 'lmdb';
import { StorageError } from '../contract/memory-errors.ts';

/**
 * One process per data directory. Conversation actors number messages in memory, so two
 * processes writing one LMDB environment would race for ids (`write_conflict`); a second process
 * is refused at open with `data_dir_locked`, naming the holder, instead.
 *
 * The lock is an owner record, a small JSON file beside the data (`owner.json`), read and set
 * inside a write transaction of the data environment that changes nothing: LMDB's writer mutex
 * (a robust, process-shared mutex in `lock.mdb`) makes the check-and-set atomic across
 * processes, and the transaction commits nothing, so it costs no flush. The record needs no
 * flush either: it only has to be seen by processes running beside this one, and one from before
 * a reboot is stale anyway. A holder that died is detected, not waited for: a record whose
 * process is gone (no such pid, a zombie, a pid reused by a process started at another time, or
 * a record from before the last boot), or a record a killed writer left unreadable, is taken over.
 * The last release in the process removes the record, in the same kind of transaction.
 */
export const OWNER_FILE = 'owner.json';

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
  /** Removes the owner record if it is still this process's (before the environment closes). */
  release(): Promise<void>;
}

/**
 * Takes the directory `path` for this process, or throws `data_dir_locked` naming the live
 * holder. `env` is the directory's open LMDB environment (the one now, if a compaction reopens
 * it): its writer mutex guards the record.
 */
export function lockDataDir(path: string, env: () => RootDatabase): DataDirLock {
  const file = join(path, OWNER_FILE);
  const me = thisProcess();
  const holder = env().transactionSync(() => {
    const current = readOwner(file);
    if (current !== undefined && !sameProcess(current, me) && alive(current)) return current;
    writeFileSync(file, JSON.stringify(me));
    return undefined;
  });
  if (holder !== undefined) {
    throw new StorageError(
      'data_dir_locked',
      `data directory ${path} is in use by process ${holder.pid} on ${holder.hostname} (since ${holder.since}); ` +
        'one LMDB data directory serves one process: stop that process, give this one another data directory, ' +
        'or share memory between processes with the PostgreSQL backend (startRuntime({ storage: { postgres: url } }))',
      { path, pid: holder.pid, hostname: holder.hostname, since: holder.since },
    );
  }
  let released = false;
  return {
    release: async () => {
      if (released) return;
      released = true;
      const removeMine = () => {
        if (readOwner(file)?.nonce === me.nonce) rmSync(file, { force: true });
      };
      try {
        env().transactionSync(removeMine);
      } catch {
        // The environment is gone (a compaction could not reopen it): without its mutex, which
        // is safe while the record is this live process's (no opener writes over it).
        try {
          removeMine();
        } catch {
          // The next opener detects a dead holder anyway.
        }
      }
    },
  };
}

/** The record in `file`; undefined when there is none or a killed writer left it cut short. */
function readOwner(file: string): OwnerRecord | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const record = JSON.parse(text) as OwnerRecord;
    return typeof record === 'object' && record !== null && typeof record.pid === 'number' ? record : undefined;
  } catch {
    return undefined;
  }
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
