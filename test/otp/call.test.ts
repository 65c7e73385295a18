import { describe, expect, it } from 'vitest';
import { assign, fromPromise, setup } from 'xstate';
import {
  call,
  cast,
  exit,
  ExitError,
  genServer,
  noReply,
  pidOf,
  processInfo,
  spawn,
  type CallEvent,
  type From,
  type ServerSelf,
} from '../../src/otp/index.ts';
import { waitDead, waitFor } from '../support/otp-fixtures.ts';

type CounterEvent = { type: 'inc' } | CallEvent<{ type: 'get' }, number>;

const counter = setup({ types: {} as { context: { n: number }; events: CounterEvent } }).createMachine({
  context: { n: 0 },
  on: {
    inc: { actions: assign({ n: ({ context }) => context.n + 1 }) },
    get: { actions: ({ context, event }) => event.from.reply(context.n) },
  },
});

/** Replies only after async work in an invoked promise actor, keeping `from` in context. */
const slowEcho = setup({
  types: {} as { context: { from: From | undefined; text: string }; events: CallEvent<{ type: 'echo'; text: string; delayMs: number }> },
  actors: { wait: fromPromise(({ input }: { input: { ms: number } }) => new Promise<void>((r) => setTimeout(r, input.ms))) },
}).createMachine({
  context: { from: undefined, text: '' },
  initial: 'idle',
  states: {
    idle: {
      on: { echo: { target: 'working', actions: assign({ from: ({ event }) => event.from, text: ({ event }) => event.text }) } },
    },
    working: {
      invoke: {
        src: 'wait',
        input: ({ event }) => ({ ms: (event as { delayMs: number }).delayMs }),
        onDone: { target: 'idle', actions: ({ context }) => context.from?.reply(context.text) },
      },
    },
  },
});

async function rejection(promise: Promise<unknown>): Promise<ExitError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ExitError);
    return error as ExitError;
  }
  throw new Error('expected a rejection');
}

describe('call and cast', () => {
  it('a machine replies to a call from an action, after casts sent before it', async () => {
    const pid = spawn(counter);
    cast(pid, { type: 'inc' });
    cast(pid, { type: 'inc' });
    await expect(call(pid, { type: 'get' })).resolves.toBe(2);
    exit(pid, 'kill');
  });

  it('a machine can reply later, after async work in an invoked promise actor', async () => {
    const pid = spawn(slowEcho);
    await expect(call(pid, { type: 'echo', text: 'hi', delayMs: 5 })).resolves.toBe('hi');
    exit(pid, 'kill');
  });

  it('call to a name that is not registered rejects with noproc', async () => {
    const error = await rejection(call('otp-test-nobody', { type: 'get' }));
    expect(error.code).toBe('noproc');
  });

  it('call to a dead pid rejects with noproc', async () => {
    const pid = spawn(counter);
    exit(pid, 'kill');
    expect((await rejection(call(pid, { type: 'get' }))).code).toBe('noproc');
  });

  it('call times out with timeout, and the late reply is dropped', async () => {
    const pid = spawn(slowEcho);
    const error = await rejection(call(pid, { type: 'echo', text: 'late', delayMs: 40 }, { timeoutMs: 5 }));
    expect(error.code).toBe('timeout');
    // The server replies late (back to idle); that reply goes nowhere and the next call gets its own answer.
    await waitFor(() => processInfo(pid)?.state === 'idle', 'the late reply');
    await expect(call(pid, { type: 'echo', text: 'next', delayMs: 1 })).resolves.toBe('next');
    exit(pid, 'kill');
  });

  it('calls sharing a timeout each time out on their own, whatever was answered before them', async () => {
    const pid = spawn(
      genServer<object>({ init: () => ({}), handleCall: (request) => (request.type === 'quick' ? 'done' : noReply) }),
    );
    const slow1 = call(pid, { type: 'slow' }, { timeoutMs: 10 });
    await expect(call(pid, { type: 'quick' }, { timeoutMs: 10 })).resolves.toBe('done');
    const slow2 = call(pid, { type: 'slow' }, { timeoutMs: 10 });
    expect((await rejection(slow1)).code).toBe('timeout');
    expect((await rejection(slow2)).code).toBe('timeout');
    expect(processInfo(pid)?.pendingCalls).toBe(0);
    exit(pid, 'kill');
  });

  it('an answered call leaves no timer keeping the process alive', async () => {
    const pid = spawn(counter);
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const pending = call(pid, { type: 'get' }, { timeoutMs: 61_234 }); // a timeout value no other test uses
    expect(timers()).toBe(before); // answered synchronously by the machine
    await pending;
    expect(timers()).toBe(before);
    exit(pid, 'kill');
  });

  it('a pending call keeps its timeout timer alive', async () => {
    const pid = spawn(genServer<object>({ init: () => ({}), handleCall: () => noReply }));
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const pending = call(pid, { type: 'never' }, { timeoutMs: 62_345 });
    expect(timers()).toBe(before + 1);
    exit(pid, 'kill');
    await pending.catch(() => {});
    expect(timers()).toBe(before);
  });

  it('a timeout that is not a positive number is refused with invalid_option and nothing is sent', async () => {
    let received = 0;
    const pid = spawn(genServer<object>({ init: () => ({}), handleCall: () => ++received }));
    for (const timeoutMs of [0, -5, Number.NaN]) {
      await expect(call(pid, { type: 'get' }, { timeoutMs })).rejects.toMatchObject({ code: 'invalid_option' });
    }
    await expect(call(pid, { type: 'get' })).resolves.toBe(1);
    exit(pid, 'kill');
  });

  it('a call pending when the server is shut down rejects with shutdown', async () => {
    const pid = spawn(genServer<object>({ init: () => ({}), handleCall: () => noReply }));
    const pending = call(pid, { type: 'never' });
    exit(pid, 'shutdown');
    expect((await rejection(pending)).code).toBe('shutdown');
  });

  it('a call pending when the server stops itself normally rejects with normal', async () => {
    const pid = spawn(
      genServer<{ self: ServerSelf }>({
        init: (_i, self) => ({ self }),
        handleCall: () => noReply,
        handleCast: (_m, state) => state.self.stop('normal'),
      }),
    );
    const pending = call(pid, { type: 'never' });
    cast(pid, { type: 'stop' });
    expect((await rejection(pending)).code).toBe('normal');
  });

  it('a call pending when the server is killed rejects with killed', async () => {
    const pid = spawn(genServer<object>({ init: () => ({}), handleCall: () => noReply }));
    const pending = call(pid, { type: 'never' });
    exit(pid, 'kill');
    expect((await rejection(pending)).code).toBe('killed');
  });

  it('a server that crashes during a call rejects it with crashed and the original error as reason', async () => {
    const boom = new Error('boom');
    const pid = spawn(
      genServer<object>({
        init: () => ({}),
        handleCall: async () => {
          await new Promise((r) => setTimeout(r, 1));
          throw boom;
        },
      }),
    );
    const error = await rejection(call(pid, { type: 'explode' }));
    expect(error.code).toBe('crashed');
    expect(error.reason).toBe(boom);
    expect(error.cause).toBe(boom);
  });

  it('a machine whose action throws crashes, and its pending calls reject with the error', async () => {
    const boom = new Error('action failed');
    const machine = setup({ types: {} as { events: CallEvent<{ type: 'hold' }> | { type: 'explode' } } }).createMachine({
      on: {
        hold: {},
        explode: {
          actions: () => {
            throw boom;
          },
        },
      },
    });
    const pid = spawn(machine);
    const pending = call(pid, { type: 'hold' });
    cast(pid, { type: 'explode' });
    const error = await rejection(pending);
    expect(error.code).toBe('crashed');
    expect(error.reason).toBe(boom);
  });

  it('a process calling itself is rejected with calling_self', async () => {
    let selfCall: Promise<unknown> | undefined;
    const machine = setup({ types: {} as { events: { type: 'go' } | CallEvent<{ type: 'get' }> } }).createMachine({
      on: {
        go: { actions: ({ self }) => void (selfCall = call(pidOf(self)!, { type: 'get' })) },
        get: { actions: ({ event }) => event.from.reply(1) },
      },
    });
    const pid = spawn(machine);
    cast(pid, { type: 'go' });
    expect((await rejection(selfCall!)).code).toBe('calling_self');
    exit(pid, 'kill');
  });

  it('from.fail rejects the caller with a domain error and the server carries on', async () => {
    class Refused extends Error {}
    const pid = spawn(
      genServer<object>({
        init: () => ({}),
        handleCall: (request, from) => {
          if (request.type === 'bad') {
            from.fail(new Refused('no'));
            return noReply;
          }
          return 'ok';
        },
      }),
    );
    await expect(call(pid, { type: 'bad' })).rejects.toBeInstanceOf(Refused);
    await expect(call(pid, { type: 'good' })).resolves.toBe('ok');
    exit(pid, 'kill');
  });

  it('cast to a dead pid or an unknown name does not throw', async () => {
    const pid = spawn(counter);
    exit(pid, 'kill');
    await waitDead(pid);
    expect(() => cast(pid, { type: 'inc' })).not.toThrow();
    expect(() => cast('otp-test-unknown-name', { type: 'inc' })).not.toThrow();
  });

  it('a gen server handles messages one at a time, in arrival order, across async handlers', async () => {
    const seen: string[] = [];
    const pid = spawn(
      genServer<{ log: string[] }>({
        init: () => ({ log: seen }),
        handleCast: async (message, state) => {
          state.log.push(`begin ${message.type}`);
          await new Promise((r) => setTimeout(r, message.type === 'a' ? 5 : 0));
          state.log.push(`end ${message.type}`);
        },
        handleCall: (_request, _from, state) => state.log.length,
      }),
    );
    cast(pid, { type: 'a' });
    cast(pid, { type: 'b' });
    await expect(call(pid, { type: 'count' })).resolves.toBe(4);
    expect(seen).toEqual(['begin a', 'end a', 'begin b', 'end b']);
    exit(pid, 'kill');
  });
});
