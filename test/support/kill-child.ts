import { spawn } from 'node:child_process';

/**
 * The kill tests' child: runs `program` (a TypeScript file, with tsx as a loader in the one
 * process: the tsx CLI would run it in a grandchild that a SIGKILL of its parent leaves
 * running), waits for its first stdout line `ready`, SIGKILLs it `killAfterMs` later, and
 * resolves with its complete stdout lines (the kill may cut the last one; it does not count).
 * Rejects if the child exits by itself, with its stderr.
 */
export function runAndKill(program: string, args: readonly string[], killAfterMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', program, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let killed = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (!killed && out.startsWith('ready\n')) {
        killed = true;
        setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') return reject(new Error(`${program} exited by itself (${code}): ${err}`));
      resolve(out.slice(0, out.lastIndexOf('\n') + 1).split('\n'));
    });
  });
}
