/**
 * The test run's hold on the shared PostgreSQL server (vitest `globalSetup`): a server this run
 * starts is stopped at its end, and one that was running before it is left as it was.
 *
 * - With `MNEMO_PG_URL` set the run uses that server and holds nothing (CI's `.ci/run` starts
 *   one and stops it itself).
 * - Without: the run's workers inherit `MNEMO_PG_HOLDER` (this process's pid), so the
 *   `scripts/postgres.sh start` a test makes (postgres-server.ts) registers the hold, and the
 *   teardown runs `scripts/postgres.sh release`: the script stops the server only if a held
 *   start started it and no other live run holds it (a run that was killed leaves a hold whose
 *   process is gone, which does not count).
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const SCRIPT = resolve(import.meta.dirname, '../../scripts/postgres.sh');

export default function setup(): (() => Promise<void>) | undefined {
  if ((process.env['MNEMO_PG_URL'] ?? '') !== '') return undefined;
  const holder = String(process.pid);
  process.env['MNEMO_PG_HOLDER'] = holder;
  return async () => {
    try {
      await promisify(execFile)(SCRIPT, ['release'], { env: { ...process.env, MNEMO_PG_HOLDER: holder }, timeout: 120_000 });
    } catch (error) {
      const e = error as { stderr?: string; message: string };
      console.error(`scripts/postgres.sh release failed: ${e.message}\n${e.stderr ?? ''}`);
    }
  };
}
