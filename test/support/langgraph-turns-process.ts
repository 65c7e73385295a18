/**
 * Runs test/programs/langgraph-turns.ts in a real child process (`node --import tsx`: no
 * wrapper process, so SIGKILL hits the process that writes) and collects what it printed.
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const fixture = join(root, 'test/programs/langgraph-turns.ts');

export interface TurnsRun {
  acks: { turn: number; messages: number }[];
  state: { id: string; type: string; text: string }[] | undefined;
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * Turns `first`, `first + 1`, ... (`turns` -1: until killed) on thread-1 of `where` (a data
 * directory, or a PostgreSQL url with `schema`); `killAfterAcks`: SIGKILL once that many were acknowledged.
 */
export function runTurns(where: { dataDir: string } | { url: string; schema: string }, first: number, turns: number, killAfterAcks?: number): Promise<TurnsRun> {
  const target = 'dataDir' in where ? [where.dataDir, 'thread-1', String(first), String(turns)] : [where.url, 'thread-1', String(first), String(turns), where.schema];
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, ...target], { cwd: root });
    const run: TurnsRun = { acks: [], state: undefined, code: null, signal: null, stderr: '' };
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const ack = /^ack (\d+) (\d+)$/.exec(line);
        if (ack) {
          run.acks.push({ turn: Number(ack[1]), messages: Number(ack[2]) });
          if (killAfterAcks !== undefined && run.acks.length === killAfterAcks) child.kill('SIGKILL');
        } else if (line.startsWith('state ')) run.state = JSON.parse(line.slice(6)) as TurnsRun['state'];
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ ...run, code, signal }));
  });
}
