import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The `mnemo` command as a user runs it: `node bin/mnemo.js ...` in a child process. */
export const MNEMO_BIN = fileURLToPath(new URL('../../bin/mnemo.js', import.meta.url));
/** The package root, where `npm start` runs. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface CliProcess {
  child: ChildProcessWithoutNullStreams;
  /** Every stdout line parsed as JSON (non-JSON lines are kept as `{raw}`). */
  lines: Record<string, unknown>[];
  stderr(): string;
  /** Resolves with the first line matching, rejects if the process exits first. */
  waitForLine(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or the signal name). */
  exited: Promise<number | string>;
}

/**
 * `cwd` matters: the default LLM config is `config/llm.yaml` under it, so tests pass a temp dir.
 * `npmStart`: run `npm start -- <args>` in the package root instead, in a process group of its
 * own (`-child.pid` names the group), so a test can see every process the script started.
 */
export function runCli(args: string[], options: { cwd: string; env?: Record<string, string>; npmStart?: boolean }): CliProcess {
  const [command, argv, cwd] = options.npmStart
    ? ['npm', ['start', '--silent', '--', ...args], PACKAGE_ROOT]
    : [process.execPath, [MNEMO_BIN, ...args], options.cwd];
  const child = spawn(command, argv, {
    cwd,
    env: { ...cleanEnv(), ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: options.npmStart === true,
  });
  const lines: Record<string, unknown>[] = [];
  let err = '';
  let buffered = '';
  const listeners = new Set<() => void>();
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const text = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      try {
        lines.push(JSON.parse(text) as Record<string, unknown>);
      } catch {
        lines.push({ raw: text });
      }
    }
    for (const l of listeners) l();
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => {
      for (const l of listeners) l();
      resolve(code ?? signal ?? -1);
    }),
  );
  return {
    child,
    lines,
    stderr: () => err,
    exited,
    waitForLine(match) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const found = lines.find(match);
          if (found) {
            listeners.delete(check);
            resolve(found);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            listeners.delete(check);
            reject(new Error(`mnemo exited (${child.exitCode ?? child.signalCode}) first; stderr:\n${err}\nstdout:\n${JSON.stringify(lines)}`));
          }
        };
        listeners.add(check);
        check();
      });
    },
  };
}

/** The parent's environment without anything that would change the server's LLM or options. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith('OPENAI_') || k.startsWith('MNEMO_')) continue;
    env[k] = v;
  }
  return env;
}
