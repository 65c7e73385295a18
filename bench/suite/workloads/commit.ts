import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { messageAt } from '../records.ts';
import { Samples } from '../stats.ts';
import { makeTempDir, removeDir } from '../temp-dir.ts';
import type { ResultRow } from '../result-types.ts';
import type { AdapterId, LogAdapter } from '../types.ts';
import type { Workload } from '../workload.ts';

/**
 * One conversation's durable commit, side by side: appends to ONE conversation, each awaited
 * until durable, so every append is its own commit (no group commit to hide behind). The
 * stores take turns in blocks of `block` appends, round after round in rotating order, so they
 * see the same machine load (fsync latency on a shared machine drifts by 10x within a minute);
 * each store's rate is its appends over its total time. Beside them, the limit: a 512-byte
 * pwrite and fdatasync of an already written block, measured in the same rotation (each row's
 * `÷ limit`, and a note).
 *
 * Every store here waits for the device: raw lmdb-js for two ordered flushes per commit
 * (fdatasync of the pages, then the meta page through an O_DSYNC descriptor), SQLite WAL FULL
 * for one fsync of the WAL, Mnemo for one write of its write-ahead journal through an
 * O_DIRECT | O_DSYNC descriptor (LMDB takes the rows later, a batch per 50 ms). The ratio to SQLite is the target
 * (≥ 1.0x); see the README's durability section.
 */
const STORES: readonly AdapterId[] = ['raw-lmdb', 'mnemo-lmdb', 'mnemo-store', 'sqlite'];

interface Contender {
  id: AdapterId | 'limit';
  append(i: number): Promise<void>;
  close(): Promise<void>;
  ms: number;
  samples: Samples;
}

export const commitWorkload: Workload = {
  id: 'commit',
  title: 'One conversation, durable appends awaited one at a time (one commit each)',
  async run(ctx) {
    const started = performance.now();
    const { rounds, block } = ctx.sizes.commit;
    const factories = ctx.withDiagnostics.filter((a) => STORES.includes(a.info.id));
    const dirs: string[] = [];
    const contenders: Contender[] = [];
    try {
      for (const f of factories) {
        const dir = makeTempDir(`commit-${f.info.id}`);
        dirs.push(dir);
        const adapter: LogAdapter = await f.open(dir);
        contenders.push({ id: f.info.id, append: (i) => adapter.append('one', messageAt(0, i)), close: () => adapter.close(), ms: 0, samples: new Samples() });
      }
      const limitDir = makeTempDir('commit-limit');
      dirs.push(limitDir);
      const fd = openSync(join(limitDir, 'f'), 'w');
      const buf = Buffer.alloc(512, 1);
      for (let i = 0; i < 64; i++) writeSync(fd, buf, 0, 512, i * 512);
      fdatasyncSync(fd);
      contenders.push({
        id: 'limit',
        append: async (i) => {
          writeSync(fd, buf, 0, 512, (i % 64) * 512);
          fdatasyncSync(fd);
        },
        close: async () => closeSync(fd),
        ms: 0,
        samples: new Samples(),
      });

      const step = ctx.progress.step(`commit: ${contenders.length} contenders x ${rounds} rounds x ${block}`, rounds * contenders.length);
      let n = 0;
      for (const c of contenders) for (let i = 0; i < 10; i++) await c.append(n++); // warm up
      for (let r = 0; r < rounds; r++) {
        for (let k = 0; k < contenders.length; k++) {
          const c = contenders[(k + r) % contenders.length]!;
          const t0 = performance.now();
          for (let i = 0; i < block; i++) {
            const t = performance.now();
            await c.append(n++);
            c.samples.add(performance.now() - t);
          }
          c.ms += performance.now() - t0;
          step.tick();
        }
      }
      step.done();
    } finally {
      for (const c of contenders) await c.close();
      for (const d of dirs) removeDir(d);
    }
    const rate = (c: Contender) => (rounds * block * 1000) / c.ms;
    const limit = contenders.find((c) => c.id === 'limit')!;
    // The limit is not a store (the table keys rows by store): it is each row's `÷ limit` and a note.
    const rows: ResultRow[] = [];
    for (const c of contenders) {
      if (c.id === 'limit') continue;
      const s = c.samples.summary();
      rows.push({ adapter: c.id, x: 1, metrics: { appendsPerSec: rate(c), ofLimit: rate(c) / rate(limit), p50Ms: s.p50Ms, p99Ms: s.p99Ms } });
    }
    return {
      id: 'commit',
      title: this.title,
      description: `Durable appends per second to one conversation, each awaited before the next (${rounds} rounds of ${block} appends per store, the stores taking turns in rotating order in one process). The limit is one pwrite + fdatasync of an already written 512-byte block, in the same rotation. Higher is better.`,
      xLabel: 'conversations',
      params: { rounds, block },
      columns: [
        { key: 'appendsPerSec', label: 'appends/s', digits: 0 },
        { key: 'ofLimit', label: '÷ fdatasync limit', digits: 2 },
        { key: 'p50Ms', label: 'p50 ms', digits: 2 },
        { key: 'p99Ms', label: 'p99 ms', digits: 2 },
      ],
      ratios: [
        { metric: 'appendsPerSec', baseline: 'sqlite', label: '÷ SQLite WAL FULL (target ≥ 1.0)' },
        { metric: 'appendsPerSec', baseline: 'raw-lmdb', label: '÷ raw lmdb-js' },
      ],
      rows,
      charts: [],
      notes: [
        `The fdatasync limit in this run: ${rate(limit).toFixed(0)}/s (p50 ${limit.samples.summary().p50Ms.toFixed(2)} ms).`,
        'Per append (strace, `npx tsx bench/commit-cost.ts --syscalls`): raw lmdb-js makes two ordered device flushes (fdatasync of the pages, then the meta page through an O_DSYNC descriptor), the floor of an LMDB commit that is durable when acknowledged; SQLite WAL FULL makes one (fsync of the WAL, whose frames are checksummed); Mnemo makes one (a checksummed record of its write-ahead journal through an O_DIRECT | O_DSYNC descriptor), and LMDB commits its batch of 50 ms later.',
      ],
      seconds: (performance.now() - started) / 1000,
    };
  },
};
