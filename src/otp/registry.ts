/**
 * The local name registry (erlang:register/whereis). A name maps to one live process; it is
 * released when the process exits, before its links and monitors are notified, so a
 * restarted incarnation can take the same name. Names are resolved on every call/cast.
 */
import { RegistryError } from './otp-errors.ts';
import type { Pid } from './pid.ts';
import type { Process } from './process.ts';
import { registerOwnName } from './process.ts';

const names = new Map<string, Process>();

/** Register `pid` under `name`. Throws RegistryError: `already_registered`, `already_named`, `noproc`. */
export function register(name: string, pid: Pid): void {
  registerOwnName(pid as unknown as Process, name);
}

/** Remove a name. Throws RegistryError `not_registered` if the name is free. */
export function unregister(name: string): void {
  const proc = names.get(name);
  if (proc === undefined) throw new RegistryError('not_registered', `unregister: '${name}' is not registered`);
  names.delete(name);
  proc.name = undefined;
}

/** The live process registered under `name`, or undefined. */
export function whereis(name: string): Pid | undefined {
  return names.get(name);
}

/** All registered names. */
export function registered(): string[] {
  return [...names.keys()];
}

export function lookupName(name: string): Process | undefined {
  return names.get(name);
}

export function claimName(name: string, proc: Process): void {
  if (typeof name !== 'string' || name.length === 0) {
    throw new RegistryError('badarg', `register: a name must be a non-empty string, got ${JSON.stringify(name)}`);
  }
  const holder = names.get(name);
  if (holder !== undefined && holder !== proc) {
    throw new RegistryError('already_registered', `register: '${name}' is already registered to ${holder}`, holder);
  }
  names.set(name, proc);
  proc.name = name;
}

export function releaseName(name: string, proc: Process): void {
  if (names.get(name) === proc) names.delete(name);
}
