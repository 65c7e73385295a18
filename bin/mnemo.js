#!/usr/bin/env node
// The `mnemo` command. Installed from the package it runs the compiled CLI (dist/esm) in this
// process: no TypeScript loader at run time. In a source checkout (src/cli/main.ts beside it: `npm
// start`, the repository's tests) it runs the TypeScript sources under tsx, a devDependency, in
// a child Node process: the loader goes on the child's command line (not registered in-process)
// so worker threads inherit it, and the child runs in its own process group and gets every stop
// signal from here exactly once, so a terminal Ctrl-C means one graceful stop, not two.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));

if (!existsSync(source)) {
  await import('../dist/esm/src/cli/main.js');
} else {
  const tsx = import.meta.resolve('tsx');
  const child = spawn(process.execPath, ['--import', tsx, source, ...process.argv.slice(2)], {
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
}
