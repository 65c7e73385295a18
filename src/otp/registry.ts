/**
 * The local name registry (erlang:register/whereis). A name maps to one live process; it is
 * released when the process exits, before its links and monitors are notified, so a
 * restarted incarnation can take the same name. Names are resolved on every call/cast.
 */
import { RegistryError } from './otp-errors.ts';
import { allNames, claimName, dropName, lookupName } from './name-table.ts';
import type { Pid } from './pid.ts';
import { Process } from './process.ts';

/** Register `pid` under `name`. Throws RegistryError: `already_registered`, `already_named`, `noproc`. */
export function register(name: string, pid: Pid): void {
  if (!(pid instanceof Process) || !pid.alive) throw new RegistryError('noproc', `register: ${pid} is not alive`);
  if (pid.name !== undefined) throw new RegistryError('already_named', `register: ${pid} is already registered as '${pid.name}'`, pid);
  claimName(name, pid);
}

/** Remove a name. Throws RegistryError `not_registered` if the name is free. */
export function unregister(name: string): void {
  if (dropName(name) === undefined) throw new RegistryError('not_registered', `unregister: '${name}' is not registered`);
}

/** The live process registered under `name`, or undefined. */
export function whereis(name: string): Pid | undefined {
  return lookupName(name);
}

/** All registered names. */
export function registered(): string[] {
  return allNames();
}
