import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ChildAnswer, ChildTask } from './child-task.ts';

const CHILD = fileURLToPath(new URL('./child-main.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

/** Runs one task in a fresh Node process (tsx loader, `--expose-gc`) and returns its answer. */
export function runChild<T extends ChildAnswer>(task: ChildTask, timeoutMs = 600_000): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', '--import', TSX, CHILD, JSON.stringify(task)],
      { maxBuffer: 16 * 1024 * 1024, timeout: timeoutMs },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`child ${task.kind} ${'adapter' in task ? task.adapter : ''} failed: ${error.message}\n${stderr}`));
          return;
        }
        const last = stdout.trim().split('\n').pop() ?? '';
        try {
          resolve(JSON.parse(last) as T);
        } catch {
          reject(new Error(`child ${task.kind} ${'adapter' in task ? task.adapter : ''} printed no answer:\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}
