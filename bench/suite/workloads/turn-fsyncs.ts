import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { withTempDir } from '../temp-dir.ts';
import type { ResultRow } from '../result-types.ts';
import type { Workload } from '../workload.ts';

/**
 * Commits and device flushes per offline chat turn (`runtime.recall.chat`, the fallback reply):
 * a child runs turns of one session between markers that carry the environment's last
 * transaction id (commits per turn, always counted), under `strace -f` when strace is
 * installed, which adds the fdatasync/fsync calls and the writes through an O_DSYNC descriptor
 * (LMDB's synced meta page: a device flush of its own) per turn. The durability rule allows two
 * commits per turn: the user's row before the model is called, everything else in one commit
 * after. x = 1 is a session's first turn (it also makes the title), x = 2 the mean of its later
 * turns. Without strace the flush columns are empty and the rows say so.
 */
const CHILD = fileURLToPath(new URL('../child/turn-fsyncs-child.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');
/** The target: commits per turn the durability rule allows. */
const LIMIT = 2;

interface Turn {
  kind: 'first' | 'later';
  /** LMDB write transactions committed during the turn (from the markers' txn ids). */
  commits: number;
  /** Undefined without strace. */
  fdatasyncs: number | undefined;
  dsyncWrites: number | undefined;
}

export const turnFsyncsWorkload: Workload = {
  id: 'turn-fsyncs',
  title: 'Commits and device flushes per offline chat turn',
  async run(ctx) {
    const started = performance.now();
    const { turns } = ctx.sizes.turnFsyncs;
    const hasStrace = spawnSync('strace', ['-V']).status === 0;
    const rows: ResultRow[] = [];
    if (ctx.adapters.some((a) => a.info.id === 'mnemo-lmdb')) {
      const step = ctx.progress.step(`turn-fsyncs: ${turns} turns under strace`, 1);
      const counted = await withTempDir('turn-fsyncs', async (dir) => countTurns(dir, turns, hasStrace));
      step.done();
      for (const [x, kind] of [[1, 'first'], [2, 'later']] as const) {
        const of = counted.filter((t) => t.kind === kind);
        const mean = (f: (t: Turn) => number | undefined) => {
          const values = of.map(f).filter((v): v is number => v !== undefined);
          return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
        };
        const commits = mean((t) => t.commits);
        const fdatasyncs = mean((t) => t.fdatasyncs);
        const syncs = fdatasyncs ?? commits;
        rows.push({
          adapter: 'mnemo-lmdb',
          x,
          metrics: {
            commits,
            fdatasyncs,
            dsyncWrites: mean((t) => t.dsyncWrites),
            ofLimit: syncs === null ? null : syncs / LIMIT,
            turns: of.length,
          },
          ...(hasStrace ? {} : { note: 'flushes not measured: strace is not installed (commits from txn ids)' }),
        });
      }
    }
    return {
      id: 'turn-fsyncs',
      title: this.title,
      description: `LMDB commits (transaction ids), fdatasync/fsync calls (one per commit) and O_DSYNC meta-page writes (LMDB's second flush of each commit) per offline chat turn of one session, the flushes counted with strace -f, over ${turns} turns. x = 1: the first turn of a session; x = 2: its later turns (mean). Target: ≤ ${LIMIT} commits per turn. Lower is better.`,
      xLabel: 'turn (1 = first of a session, 2 = later)',
      params: { turns, limit: LIMIT, strace: hasStrace },
      columns: [
        { key: 'commits', label: 'commits per turn', digits: 1 },
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

function countTurns(dir: string, turns: number, strace: boolean): Turn[] {
  const data = join(dir, 'data');
  const child = [process.execPath, '--import', TSX, CHILD, data, String(turns)];
  let lines: string[];
  if (strace) {
    const trace = join(dir, 'turns.strace');
    execFileSync('strace', ['-f', '-s', '128', '-e', 'trace=openat,write,pwrite64,pwritev,fdatasync,fsync', '-o', trace, ...child], { stdio: 'ignore', timeout: 300_000 });
    lines = readFileSync(trace, 'utf8').split('\n');
  } else {
    const run = spawnSync(child[0]!, child.slice(1), { encoding: 'utf8', timeout: 300_000 });
    lines = run.stderr.split('\n');
  }
  const dsyncFds = new Set<string>();
  const out: Turn[] = [];
  let current: (Turn & { fromTxn: number }) | undefined;
  for (const line of lines) {
    const opened = /openat\(AT_FDCWD, "[^"]+", ([A-Z_|]+).*\) = (\d+)/.exec(line);
    if (opened !== null && opened[1]!.includes('O_DSYNC')) dsyncFds.add(opened[2]!);
    const begin = /MNEMO-TURN-BEGIN (first|later) (\d+)/.exec(line);
    const end = /MNEMO-TURN-END (\d+)/.exec(line);
    if (begin !== null) {
      current = { kind: begin[1] as Turn['kind'], fromTxn: Number(begin[2]), commits: 0, fdatasyncs: strace ? 0 : undefined, dsyncWrites: strace ? 0 : undefined };
    } else if (end !== null && current !== undefined) {
      out.push({ kind: current.kind, commits: Number(end[1]) - current.fromTxn, fdatasyncs: current.fdatasyncs, dsyncWrites: current.dsyncWrites });
      current = undefined;
    } else if (current !== undefined && strace) {
      // A call is counted where it starts (an interrupted one is printed again when it resumes).
      if (line.includes('resumed>')) continue;
      const call = /^\d+\s+(fdatasync|fsync|pwrite64|pwritev|write)\((\d+)/.exec(line);
      if (call === null) continue;
      if (call[1] === 'fdatasync' || call[1] === 'fsync') current.fdatasyncs = (current.fdatasyncs ?? 0) + 1;
      else if (dsyncFds.has(call[2]!)) current.dsyncWrites = (current.dsyncWrites ?? 0) + 1;
    }
  }
  return out;
}
