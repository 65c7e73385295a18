import { InvalidNamespaceError } from '@langchain/langgraph-checkpoint';
import { InvalidInputError } from '../errors.ts';

/**
 * MnemoStore's keys as every storage keeps them: a namespace `['users', 'u1']` as its path
 * `users:u1` (labels cannot contain ':', so the path is unambiguous, and the items of a
 * namespace and of everything below it are one key range), an item key as given, both checked
 * at the boundary.
 */
const MAX_PATH_BYTES = 1024;
const MAX_KEY_BYTES = 512;

/**
 * A namespace's path, checked as LangGraph's `validateNamespace` does (labels are non-empty
 * strings without '.', ':' or NUL; the root label `langgraph` is reserved for writes), plus a
 * length bound (the path is part of a database key).
 */
export function namespacePath(namespace: unknown, options: { allowEmpty: boolean; write: boolean }): string {
  if (!Array.isArray(namespace)) throw new InvalidNamespaceError(`Namespace must be an array of strings, got ${typeof namespace}`);
  if (namespace.length === 0) {
    if (options.allowEmpty) return '';
    throw new InvalidNamespaceError('Namespace cannot be empty.');
  }
  for (const label of namespace as unknown[]) {
    if (typeof label !== 'string') throw new InvalidNamespaceError(`Namespace labels must be strings, got ${typeof label}`);
    if (label === '') throw new InvalidNamespaceError('Namespace labels cannot be empty strings.');
    if (/[.:\u0000]/.test(label)) throw new InvalidNamespaceError(`Invalid namespace label '${label}': labels cannot contain '.', ':' or NUL`);
  }
  if (options.write && namespace[0] === 'langgraph') throw new InvalidNamespaceError('Root label for namespace cannot be "langgraph".');
  const path = (namespace as string[]).join(':');
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) throw new InvalidNamespaceError(`Namespace is longer than ${MAX_PATH_BYTES} bytes`);
  return path;
}

export function itemKey(key: unknown): string {
  if (typeof key !== 'string' || key === '') throw new InvalidInputError('invalid_id', 'an item key must be a non-empty string', { field: 'key' });
  if (key.includes('\u0000')) throw new InvalidInputError('invalid_id', 'an item key must not contain a NUL character', { field: 'key' });
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw new InvalidInputError('invalid_id', `an item key is longer than ${MAX_KEY_BYTES} bytes`, { field: 'key' });
  return key;
}
