import { describe, expect, it } from 'vitest';
import {
  call,
  exit,
  genServer,
  monitor,
  register,
  registered,
  RegistryError,
  spawn,
  unregister,
  whereis,
  type Pid,
} from '../../src/otp/index.ts';

const named = (tag: string) => genServer<object>({ init: () => ({}), handleCall: () => tag });

function registryError(fn: () => void): RegistryError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(RegistryError);
    return error as RegistryError;
  }
  throw new Error('expected a RegistryError');
}

describe('registry', () => {
  it('register, whereis, registered and unregister', () => {
    const pid = spawn(named('a'));
    register('reg-basic', pid);
    expect(whereis('reg-basic')).toBe(pid);
    expect(registered()).toContain('reg-basic');
    unregister('reg-basic');
    expect(whereis('reg-basic')).toBeUndefined();
    expect(registered()).not.toContain('reg-basic');
    exit(pid, 'kill');
  });

  it('whereis is undefined for a name never registered', () => {
    expect(whereis('reg-never')).toBeUndefined();
  });

  it('a duplicate name is refused with already_registered, naming the holder', () => {
    const first = spawn(named('a'), { name: 'reg-dup' });
    const second = spawn(named('b'));
    const error = registryError(() => register('reg-dup', second));
    expect(error.code).toBe('already_registered');
    expect(error.pid).toBe(first);
    exit(first, 'kill');
    exit(second, 'kill');
  });

  it('spawn with a taken name throws and starts nothing', () => {
    const first = spawn(named('a'), { name: 'reg-spawn-dup' });
    let inits = 0;
    const logic = genServer({ init: () => void inits++ });
    expect(registryError(() => spawn(logic, { name: 'reg-spawn-dup' })).code).toBe('already_registered');
    expect(inits).toBe(0);
    exit(first, 'kill');
  });

  it('a process can hold only one name', () => {
    const pid = spawn(named('a'), { name: 'reg-one' });
    expect(registryError(() => register('reg-two', pid)).code).toBe('already_named');
    exit(pid, 'kill');
  });

  it('registering a dead process is refused with noproc', () => {
    const pid = spawn(named('a'));
    exit(pid, 'kill');
    expect(registryError(() => register('reg-dead', pid)).code).toBe('noproc');
  });

  it('an empty name is refused with badarg', () => {
    const pid = spawn(named('a'));
    expect(registryError(() => register('', pid)).code).toBe('badarg');
    exit(pid, 'kill');
  });

  it('unregistering a free name is refused with not_registered', () => {
    expect(registryError(() => unregister('reg-free')).code).toBe('not_registered');
  });

  it('the name is released before DOWN fires, so the observer can re-register it', async () => {
    const old = spawn(named('old'), { name: 'reg-reuse' });
    const replacement = await new Promise<Pid>((resolve) => {
      monitor(old, () => {
        expect(whereis('reg-reuse')).toBeUndefined();
        resolve(spawn(named('new'), { name: 'reg-reuse' }));
      });
      exit(old, 'kill');
    });
    expect(whereis('reg-reuse')).toBe(replacement);
    await expect(call('reg-reuse', { type: 'who' })).resolves.toBe('new');
    exit(replacement, 'kill');
  });

  it('a name is resolved on every call', async () => {
    const a = spawn(named('a'), { name: 'reg-resolve' });
    await expect(call('reg-resolve', { type: 'who' })).resolves.toBe('a');
    exit(a, 'kill');
    await expect(call('reg-resolve', { type: 'who' })).rejects.toMatchObject({ code: 'noproc' });
    const b = spawn(named('b'), { name: 'reg-resolve' });
    await expect(call('reg-resolve', { type: 'who' })).resolves.toBe('b');
    exit(b, 'kill');
  });
});
