/**
 * `npm run bench`: Mnemo side by side with raw lmdb-js (the limit on this machine) and its
 * peers (the demo's JSONL files, SQLite, LangGraph checkpointers), on the same records with the
 * same durability. Progress bars on stderr, one table per workload on stdout; results in
 * bench/results/ (run-<iso>.json, latest.json, latest.md, *.svg).
 *
 *   npm run bench                                   full mode (the issue's sizes; tens of minutes)
 *   npm run bench -- --quick                        small sizes, under two minutes (CI smoke)
 *   npm run bench -- --only append                  one workload (or a comma list)
 *   npm run bench -- --adapters raw-lmdb,mnemo-lmdb a subset of stores
 *   npm run bench -- --out /tmp/results             another results directory
 */
import { parseCliArgs, USAGE, UsageError } from './suite/cli-args.ts';

try {
  const options = parseCliArgs(process.argv.slice(2));
  if (options.help) {
    process.stdout.write(USAGE);
  } else {
    const { runSuite } = await import('./suite/suite.ts');
    const argv = process.argv.slice(2);
    const command = `npm run bench${argv.length > 0 ? ` -- ${argv.join(' ')}` : ''}`;
    const { files } = await runSuite({ ...options, command });
    process.stderr.write(`wrote ${files.length} files to ${options.outDir}\n`);
  }
} catch (error) {
  if (error instanceof UsageError) process.stderr.write(`bench: ${error.message}\n${USAGE}`);
  else process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
