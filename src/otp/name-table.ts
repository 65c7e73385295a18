/**
 * The table behind the local registry: name -> process, one name per process. It knows
 * processes only as Pids that carry their own `name`, so the process shell can claim and
 * release names without the registry's public functions (registry.ts) depending back on it.
 */
import { RegistryError } from './otp-errors.ts';
import type { Pid } from './pid.ts';

/** A Pid that remembers the name it is registered under. */
export interface Registrant extends Pid {
  name: string | undefined;
}

const names = new Map<string, Registrant>();

export function lookupName(name: string): Registrant | undefined {
  return names.get(name);
}

export function allNames(): string[] {
  return [...names.keys()];
}

/** Bind `name` to `proc`. Throws RegistryError `badarg` (not a non-empty string) or `already_registered`. */
export function claimName(name: string, proc: Registrant): void {
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

/** Free `name` if `proc` still holds it. */
export function releaseName(name: string, proc: Registrant): void {
  if (names.get(name) === proc) names.delete(name);
}

/** Free `name` whoever holds it; the holder, if any. */
export function dropName(name: string): Registrant | undefined {
  const proc = names.get(name);
  if (proc === undefined) return undefined;
  names.delete(name);
  proc.name = undefined;
  return proc;
}
