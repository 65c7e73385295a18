#!/usr/bin/env node
// The `mnemo` command: runs src/cli/main.ts under tsx's loader in a child Node process. The loader
// goes on the child's command line (not registered in-process) so worker threads inherit it.
// The child runs in its own process group and gets every stop signal from here exactly once,
// so a terminal Ctrl-C means one graceful stop, not two.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const tsx = import.meta.resolve('tsx');

const child = spawn(process.execPath, ['--import', tsx, cli, ...process.argv.slice(2)], {
  stdio: 'inherit',
  detached: true,
});

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}

child.on('error', (err) => {
  process.stderr.write(`mnemo: cannot start node: ${err.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : 1);
});
