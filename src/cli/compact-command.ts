/**
 * `mnemo compact [--data-dir DIR] [--rebuild]`: compacts a data directory no process has open.
 * A compacted copy of `data.mdb` replaces it, kill-safe (lmdb-environment.ts's
 * `compactEnvironment`): LMDB's compacting copy (live pages only: the free pages, and the bytes
 * of erased values in them, are left behind), or with `--rebuild` a new environment written
 * entry by entry, which holds no byte of anything erased, keys included (slower).
 *
 * A directory a running server holds is refused with `data_dir_locked` (naming its process),
 * exit 1, nothing touched: one LMDB directory serves one process. Compact a running server's
 * memory through it instead: `DELETE /api/users/{id}?compact=true`, or `runtime.compact()`.
 *
 * Prints one JSON line on success, `{"compacted": DIR, "bytes_before", "bytes_after", "ms"}`,
 * exit 0; bad options exit 2 (ConfigError), a refused or failed compaction exits 1 with
 * `mnemo: <code>: <message>` on stderr.
 */
import { resolve } from 'node:path';
import { ConfigError, parseFlags } from './cli-errors.ts';

export const COMPACT_HELP = `Usage: mnemo compact [--data-dir <path>] [--rebuild]

Compacts the LMDB data directory of a stopped server: data.mdb is replaced by LMDB's
compacting copy (live pages only), so free pages, and erased values in them, are gone;
an erased key can stay where a branch page kept it. With --rebuild, data.mdb is written
anew entry by entry: no byte of anything erased stays, keys included (slower).
A directory that a running server holds is refused (data_dir_locked); compact a running
server with DELETE /api/users/<id>?compact=true instead.

  --data-dir <path>   MNEMO_DATA_DIR   LMDB data directory   [./data]
  --rebuild                            rebuild instead of copying pages
  -h, --help                           print this help and exit
`;

export interface CompactOptions {
  dataDir: string;
  rebuild: boolean;
  help: boolean;
}

export function parseCompactOptions(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): CompactOptions {
  const values = parseFlags(argv, { 'data-dir': { type: 'string' }, rebuild: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, 'mnemo compact');
  const fromEnv = env['MNEMO_DATA_DIR'] === '' ? undefined : env['MNEMO_DATA_DIR'];
  return { dataDir: resolve(cwd, values['data-dir'] ?? fromEnv ?? 'data'), rebuild: values.rebuild === true, help: values.help === true };
}

/** Runs the command; resolves with its exit code. */
export async function runCompact(options: CompactOptions): Promise<number> {
  if (options.help) {
    process.stdout.write(COMPACT_HELP);
    return 0;
  }
  const { existsSync } = await import('node:fs');
  if (!existsSync(options.dataDir)) {
    process.stderr.write(`mnemo: no data directory at ${options.dataDir}\n`);
    return 1;
  }
  const { compactDataDir } = await import('../memory/lmdb/lmdb-environment.ts');
  try {
    const report = await compactDataDir(options.dataDir, {}, { copy: options.rebuild ? 'rebuild' : 'pages' });
    process.stdout.write(
      `${JSON.stringify({ compacted: options.dataDir, bytes_before: report.bytesBefore, bytes_after: report.bytesAfter, ms: Math.round(report.ms) })}\n`,
    );
    return 0;
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown };
    process.stderr.write(`mnemo: ${typeof e.code === 'string' ? `${e.code}: ` : ''}${String(e.message ?? error)}\n`);
    return 1;
  }
}
