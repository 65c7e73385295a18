/**
 * A tiny application for the signal test: starts a tree of three workers that print when
 * they stop, installs the shutdown handlers, prints "ready", and waits for a signal.
 * With HANG_ON_STOP=1 worker c never finishes stopping (shutdown infinity), so only a second
 * signal ends the program.
 */
import { genServer, installShutdownHandlers, spawn, startApplication } from '../../src/otp/index.ts';

const hang = process.env['HANG_ON_STOP'] === '1';

const printer = (id: string) => () =>
  spawn(
    genServer<object>({
      init: () => ({}),
      terminate: async (reason) => {
        process.stdout.write(`stopping ${id}\n`);
        await new Promise((r) => setTimeout(r, 10));
        if (hang && id === 'c') await new Promise(() => {});
        process.stdout.write(`stop ${id} ${String(reason)}\n`);
      },
    }),
    { trapExit: true },
  );

const app = await startApplication({
  children: ['a', 'b', 'c'].map((id) => ({ id, start: printer(id), shutdown: 'infinity' as const })),
});
installShutdownHandlers(app, {
  exit: (code) => {
    process.stdout.write(`exit ${code}\n`);
    process.exit(code);
  },
});
setInterval(() => {}, 1000); // keep the process alive until a signal
process.stdout.write('ready\n');
