/**
 * A supervised worker that crashes and is restarted (README: "The runtime").
 *
 *   npx tsx examples/supervised-worker.ts
 *
 * It imports `mnemo` as an installed copy would; in this checkout run `npm run build` once first
 * (the package's own name resolves to its dist/). test/docs/examples.test.ts runs it.
 */
import { call, cast, genServer, monitor, start, startSupervisor, stop, whereis } from 'mnemo/otp';

type Request = { type: 'get' };
type Command = { type: 'add'; n: number } | { type: 'crash' };

// A counter: state lives in the process; a crash loses it, the supervisor starts a fresh one.
const counter = genServer<{ total: number }, void, Request, Command>({
  init: () => ({ total: 0 }),
  handleCall: (_request, _from, state) => state.total,
  handleCast: (command, state) => {
    if (command.type === 'crash') throw new Error('boom');
    state.total += command.n;
  },
});

const sup = await startSupervisor(
  {
    strategy: 'one_for_one',
    intensity: 3, // at most 3 restarts ...
    period: 5, // ... in 5 seconds, else the supervisor gives up and escalates
    children: [{ id: 'counter', start: () => start(counter, { name: 'counter' }), restart: 'permanent' }],
  },
  { name: 'example_sup' },
);

cast('counter', { type: 'add', n: 2 });
console.log('total before the crash:', await call<number>('counter', { type: 'get' }));

const first = whereis('counter')!;
const down = new Promise((resolve) => monitor(first, (d) => resolve(d.reason)));
cast('counter', { type: 'crash' });
console.log('the first incarnation went DOWN with:', String((await down as { crashed: Error }).crashed));

// The name was freed before DOWN fired; the supervisor restarts the child a moment later and
// the new incarnation registers the same name, so calls by name reach it again.
while (whereis('counter') === undefined) await new Promise((r) => setTimeout(r, 1));
console.log('total after the restart:', await call<number>('counter', { type: 'get' }));
console.log('same process?', whereis('counter') === first);
await stop(sup, 'shutdown');
