import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/runtime-fixtures.ts';

// The durability rule seen from the kernel: an append is acknowledged only after its commit is
// on the device. The writer runs under `strace -f`; every acknowledgement (a write(2) of
// `MNEMO-ACK`) must come after an fdatasync of the data file and then a write through LMDB's
// O_DSYNC descriptor (the synced meta page) that both returned after the previous
// acknowledgement (for the serial appends) or after the writes were issued (for the group
// commit). An ack after `committed` alone (before the flush) fails this.

const hasStrace = spawnSync('strace', ['-V']).status === 0;
const writer = join(import.meta.dirname, '../programs/flush-order-writer.ts');
const dir = tempDir('mnemo-flush-order-');
afterAll(() => dir.remove());

const SERIAL = 20;
const CONCURRENT = 8;

interface Ack {
  n: number;
  /** Device flushes that returned since the previous acknowledgement, in order. */
  flushesBefore: Array<'fdatasync' | 'dsync-write'>;
}

function traceAcks(mode: 'durable' | 'nosync'): Ack[] {
  const trace = join(dir.path, `${mode}.strace`);
  const args = [writer, join(dir.path, mode), String(SERIAL), String(CONCURRENT), ...(mode === 'nosync' ? ['nosync'] : [])];
  execFileSync('strace', ['-f', '-e', 'trace=openat,write,pwrite64,pwritev,fdatasync,fsync', '-o', trace, process.execPath, '--import', 'tsx', ...args], {
    stdio: 'ignore',
  });
  const dataFds = new Set<string>();
  const dsyncFds = new Set<string>();
  const pending = new Map<string, 'fdatasync' | 'dsync-write'>();
  const acks: Ack[] = [];
  let since: Ack['flushesBefore'] = [];
  let inside = false;
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    const opened = /openat\(AT_FDCWD, "([^"]+\/data\.mdb)", ([A-Z_|]+).*\) = (\d+)/.exec(line);
    if (opened !== null && opened[1]!.startsWith(dir.path)) {
      dataFds.add(opened[3]!);
      if (opened[2]!.includes('O_DSYNC')) dsyncFds.add(opened[3]!);
      continue;
    }
    if (line.includes('MNEMO-BEGIN')) inside = true;
    if (!inside) continue;
    const pid = /^(\d+)/.exec(line)?.[1] ?? '';
    const ack = /write\(2, "MNEMO-ACK (\d+)/.exec(line);
    if (ack !== null) {
      acks.push({ n: Number(ack[1]), flushesBefore: since });
      since = [];
      continue;
    }
    const call = /^\d+\s+(fdatasync|fsync|pwrite64|pwritev|write)\((\d+)/.exec(line);
    let flush: 'fdatasync' | 'dsync-write' | undefined;
    if (call !== null && dataFds.has(call[2]!)) {
      flush = call[1] === 'fdatasync' || call[1] === 'fsync' ? 'fdatasync' : dsyncFds.has(call[2]!) ? 'dsync-write' : undefined;
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

const flushedInOrder = (f: Ack['flushesBefore']) => {
  const sync = f.indexOf('fdatasync');
  return sync >= 0 && f.indexOf('dsync-write', sync) > sync;
};

describe.skipIf(!hasStrace)('the acknowledgement of an append, seen with strace', () => {
  it('comes only after the commit was fdatasync-ed and its meta page written through the O_DSYNC descriptor', () => {
    const acks = traceAcks('durable');
    expect(acks.map((a) => a.n)).toEqual(Array.from({ length: SERIAL + CONCURRENT }, (_, i) => i + 1));
    // Each serial append is its own commit, issued after the previous acknowledgement.
    for (const a of acks.slice(0, SERIAL)) expect(flushedInOrder(a.flushesBefore), `ack ${a.n} after ${a.flushesBefore.join(', ') || 'no flush'}`).toBe(true);
    // The concurrent appends share one commit: its flushes come before the first of their acks.
    expect(flushedInOrder(acks[SERIAL]!.flushesBefore), `first group ack after ${acks[SERIAL]!.flushesBefore.join(', ') || 'no flush'}`).toBe(true);
  });

  it('is seen to come without any flush when the runtime runs with lmdb.noSync (the check is not vacuous)', () => {
    const acks = traceAcks('nosync');
    expect(acks).toHaveLength(SERIAL + CONCURRENT);
    expect(acks.filter((a) => flushedInOrder(a.flushesBefore))).toEqual([]);
  });
});
