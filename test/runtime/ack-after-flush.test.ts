import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/runtime-fixtures.ts';

// The durability rule seen from the kernel: an append is acknowledged only after it is on the
// device. The writer runs under `strace -f`; every acknowledgement (a write(2) of `MNEMO-ACK`)
// must come after one of the two flushes that make an append durable, returned since the
// append was issued (after the previous acknowledgement, for the serial appends):
// - through the write-ahead journal: a write through the journal's O_DSYNC descriptor whose
//   bytes hold the append's message;
// - straight to LMDB (a shared commit): an fdatasync of the data file and then a write through
//   LMDB's O_DSYNC descriptor (the synced meta page), in that order.
// An ack after `committed` alone, or after a journal write of other records, fails this.

const hasStrace = spawnSync('strace', ['-V']).status === 0;
const writer = join(import.meta.dirname, '../programs/flush-order-writer.ts');
const dir = tempDir('mnemo-flush-order-');
afterAll(() => dir.remove());

const SERIAL = 20;
const CONCURRENT = 8;
const SHARED = 4;

type Flush = { kind: 'fdatasync' } | { kind: 'dsync-write' } | { kind: 'journal'; bytes: string };
interface Ack {
  n: number;
  content: string;
  /** Device flushes that returned since the previous acknowledgement, in order. */
  flushesBefore: Flush[];
}

function traceAcks(mode: 'durable' | 'nosync'): Ack[] {
  const trace = join(dir.path, `${mode}.strace`);
  const args = [writer, join(dir.path, mode), String(SERIAL), String(CONCURRENT), String(SHARED), ...(mode === 'nosync' ? ['nosync'] : [])];
  execFileSync('strace', ['-f', '-s', '65536', '-e', 'trace=openat,write,pwrite64,pwritev,fdatasync,fsync', '-o', trace, process.execPath, '--import', 'tsx', ...args], {
    stdio: 'ignore',
  });
  const dataFds = new Set<string>();
  const dsyncFds = new Set<string>();
  const journalFds = new Set<string>();
  const pending = new Map<string, Flush>();
  const acks: Ack[] = [];
  let since: Flush[] = [];
  let inside = false;
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    const opened = /openat\(AT_FDCWD, "([^"]+\/(data\.mdb|journal\.mnemo))", ([A-Z_|]+).*\) = (\d+)/.exec(line);
    if (opened !== null && opened[1]!.startsWith(dir.path)) {
      const fd = opened[4]!;
      if (opened[2] === 'journal.mnemo') {
        if (opened[3]!.includes('O_DSYNC')) journalFds.add(fd);
      } else {
        dataFds.add(fd);
        if (opened[3]!.includes('O_DSYNC')) dsyncFds.add(fd);
      }
      continue;
    }
    if (line.includes('MNEMO-BEGIN')) inside = true;
    if (!inside) continue;
    const pid = /^(\d+)/.exec(line)?.[1] ?? '';
    const ack = /write\(2, "MNEMO-ACK (\d+) ([^\\"]+)/.exec(line);
    if (ack !== null) {
      acks.push({ n: Number(ack[1]), content: ack[2]!, flushesBefore: since });
      since = [];
      continue;
    }
    const call = /^\d+\s+(fdatasync|fsync|pwrite64|pwritev|write)\((\d+)(.*)/.exec(line);
    let flush: Flush | undefined;
    if (call !== null && (dataFds.has(call[2]!) || journalFds.has(call[2]!))) {
      const fd = call[2]!;
      if (journalFds.has(fd)) flush = call[1]!.startsWith('pwrite') || call[1] === 'write' ? { kind: 'journal', bytes: call[3]! } : undefined;
      else flush = call[1] === 'fdatasync' || call[1] === 'fsync' ? { kind: 'fdatasync' } : dsyncFds.has(fd) ? { kind: 'dsync-write' } : undefined;
      // A call another thread interrupted is printed twice: it counts when it returns.
      if (flush !== undefined && line.includes('<unfinished ...>')) {
        pending.set(pid, flush);
        flush = undefined;
      }
    } else if (/<\.\.\. (fdatasync|fsync|pwrite64|pwritev|write) resumed>/.test(line)) {
      flush = pending.get(pid);
      pending.delete(pid);
    }
    if (flush !== undefined) since.push(flush);
  }
  return acks;
}

/** The message `content` is on the device: the journal wrote it, or LMDB flushed in order. */
const durableBefore = (flushes: Flush[], content: string) => {
  if (flushes.some((f) => f.kind === 'journal' && f.bytes.includes(`${content}\\"`))) return true;
  const sync = flushes.findIndex((f) => f.kind === 'fdatasync');
  return sync >= 0 && flushes.slice(sync + 1).some((f) => f.kind === 'dsync-write');
};
const describeFlushes = (f: Flush[]) => f.map((x) => x.kind).join(', ') || 'no flush';

describe.skipIf(!hasStrace)('the acknowledgement of an append, seen with strace', () => {
  it('comes only after the append was written through the journal, or fdatasync-ed and its meta page written through the O_DSYNC descriptor', () => {
    const acks = traceAcks('durable');
    expect(acks.map((a) => a.n)).toEqual(Array.from({ length: SERIAL + CONCURRENT + SHARED }, (_, i) => i + 1));
    const serial = acks.slice(0, SERIAL);
    const concurrent = acks.slice(SERIAL, SERIAL + CONCURRENT);
    const shared = acks.slice(SERIAL + CONCURRENT);
    // Each serial append is its own flush of the journal, issued after the previous acknowledgement.
    for (const a of serial) {
      expect(durableBefore(a.flushesBefore, a.content), `ack ${a.n} (${a.content}) after ${describeFlushes(a.flushesBefore)}`).toBe(true);
      expect(a.flushesBefore.some((f) => f.kind === 'journal'), `ack ${a.n} went through the journal`).toBe(true);
    }
    // The concurrent appends share one journal write, before the first of their acks.
    const group = concurrent[0]!.flushesBefore;
    for (const a of concurrent) expect(durableBefore(group, a.content), `${a.content} in the group's flush: ${describeFlushes(group)}`).toBe(true);
    // A shared commit goes straight to LMDB: its two flushes, in order, before the ack.
    for (const a of shared) {
      expect(durableBefore(a.flushesBefore.filter((f) => f.kind !== 'journal'), a.content), `ack ${a.n} (${a.content}) after ${describeFlushes(a.flushesBefore)}`).toBe(true);
    }
  });

  it('is seen to come without any flush when the runtime runs with lmdb.noSync (the check is not vacuous)', () => {
    const acks = traceAcks('nosync');
    expect(acks).toHaveLength(SERIAL + CONCURRENT + SHARED);
    expect(acks.filter((a) => durableBefore(a.flushesBefore, a.content))).toEqual([]);
  });
});
