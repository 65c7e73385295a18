import { parseArgs, type ParseArgsConfig } from 'node:util';
import { MnemoError } from '../errors.ts';

/** A command-line flag, environment variable or config file that cannot be used as given. */
export class ConfigError extends MnemoError {
  readonly code = 'invalid_config';
}

/**
 * A command's flags, strictly (no positionals, no unknown flag): node:util's `parseArgs`, with
 * its refusal as a `ConfigError` that points to `<command> --help`.
 */
export function parseFlags<const O extends NonNullable<ParseArgsConfig['options']>>(
  argv: readonly string[],
  options: O,
  command: string,
): ReturnType<typeof parseArgs<{ args: string[]; strict: true; allowPositionals: false; options: O }>>['values'] {
  try {
    return parseArgs({ args: [...argv], strict: true, allowPositionals: false, options }).values;
  } catch (err) {
    throw new ConfigError(`${(err as Error).message} (see ${command} --help)`);
  }
}
