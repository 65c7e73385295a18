/**
 * Mnemo's version, read from its own package.json (through the package's self-reference, so it
 * is the same file from the sources, dist/esm and dist/cjs).
 */
import { requireHere } from './module-location.ts';

export function mnemoVersion(): string {
  const pkg = requireHere('mnemo/package.json') as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}
