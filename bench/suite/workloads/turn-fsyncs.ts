import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { withTempDir } from '../temp-dir.ts';
import type { ResultRow } from '../result-types.ts';
import type { Workload } from '../workload.ts';

/**
 * Device flushes per offline chat turn (`runtime.recall.chat`, the fallback reply): a child
 * runs turns of one session under `strace -f`, between markers, and the fdatasync/fsync calls
 * and the writes through an O_DSYNC descriptor (LMDB's synced meta page: a device flush of its
 * own) are counted per turn. The durability rule allows two commits per turn: the user's row
 * before the model is called, everything else in one commit after. x = 1 is a session's first
 * turn (it also makes the title), x = 2 the mean of its later turns. Without strace the rows
 * are empty and say so.
 */
const CHILD = fileURLToPath(new URL('../child/turn-fsyncs-child.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');
/** The target: commits per turn the durability rule allows. */
const LIMIT = 2;

interface Turn {
  kind: 'first' | 'later';
  fdatasyncs: number;
  dsyncWrites: number;
}

export const turnFsyncsWorkload: Workload = {
  id: 'turn-fsyncs',
  title: 'Device flushes per offline chat turn',
  async run(ctx) {
    const started = performance.now();
    const { turns } = ctx.sizes.turnFsyncs;
    const hasStrace = spawnSync('strace', ['-V']).status === 0;
    const rows: ResultRow[] = [];
    if (ctx.adapters.some((a) => a.info.id === 'mnemo-lmdb')) {
      const step = ctx.progress.step(`turn-fsyncs: ${turns} turns under strace`, 1);
      const counted = hasStrace ? await withTempDir('turn-fsyncs', async (dir) => countTurns(dir, turns)) : [];
      step.done();
      for (const [x, kind] of [[1, 'first'], [2, 'later']] as const) {
        const of = counted.filter((t) => t.kind === kind);
        const mean = (f: (t: Turn) => number) => (of.length === 0 ? null : of.reduce((s, t) => s + f(t), 0) / of.length);
        const fdatasyncs = mean((t) => t.fdatasyncs);
        rows.push({
          adapter: 'mnemo-lmdb',
          x,
          metrics: {
            fdatasyncs,
            dsyncWrites: mean((t) => t.dsyncWrites),
            ofLimit: fdatasyncs === null ? null : fdatasyncs / LIMIT,
            turns: of.length,
          },
          ...(hasStrace ? {} : { note: 'not measured: strace is not installed' }),
        });
      }
    }
    return {
      id: 'turn-fsyncs',
      title: this.title,
      description: `fdatasync/fsync calls (one per LMDB commit) and O_DSYNC meta-page writes (LMDB's second flush of each commit) per offline chat turn of one session, counted with strace -f over ${turns} turns. x = 1: the first turn of a session; x = 2: its later turns (mean). Target: ≤ ${LIMIT} commits per turn. Lower is better.`,
      xLabel: 'turn (1 = first of a session, 2 = later)',
      params: { turns, limit: LIMIT, strace: hasStrace },
      columns: [
        { key: 'fdatasyncs', label: 'fdatasync per turn', digits: 1 },
        { key: 'dsyncWrites', label: 'O_DSYNC writes per turn', digits: 1 },
        { key: 'ofLimit', label: `÷ limit (${LIMIT})`, digits: 2 },
        { key: 'turns', label: 'turns', digits: 0 },
      ],
      ratios: [],
      rows,
      charts: [],
      notes: ['Each commit is two device flushes (fdatasync, then the O_DSYNC meta page): a turn of 2 commits waits for 4 flushes, in two rounds.'],
      seconds: (performance.now() - started) / 1000,
    };
  },
};

function countTurns(dir: string, turns: number): Turn[] {
  const trace = join(dir, 'turns.strace');
  execFileSync('strace', ['-f', '-e', 'trace=openat,write,pwrite64,pwritev,fdatasync,fsync', '-o', trace, process.execPath, '--import', TSX, CHILD, join(dir, 'data'), String(turns)], {
    stdio: 'ignore',
    timeout: 300_000,
  });
  const dsyncFds = new Set<string>();
  const out: Turn[] = [];
  let current: Turn | undefined;
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    const opened = /openat\(AT_FDCWD, "[^"]+", ([A-Z_|]+).*\) = (\d+)/.exec(line);
    if (opened !== null && opened[1]!.includes('O_DSYNC')) dsyncFds.add(opened[2]!);
    const begin = /MNEMO-TURN-BEGIN (first|later)/.exec(line);
    if (begin !== null) current = { kind: begin[1] as Turn['kind'], fdatasyncs: 0, dsyncWrites: 0 };
    else if (line.includes('MNEMO-TURN-END') && current !== undefined) {
      out.push(current);
      current = undefined;
    } else if (current !== undefined) {
      // A call is counted where it starts (an interrupted one is printed again when it resumes).
      if (line.includes('resumed>')) continue;
      const call = /^\d+\s+(fdatasync|fsync|pwrite64|pwritev|write)\((\d+)/.exec(line);
      if (call === null) continue;
      if (call[1] === 'fdatasync' || call[1] === 'fsync') current.fdatasyncs++;
      else if (dsyncFds.has(call[2]!)) current.dsyncWrites++;
    }
  }
  return out;
}
