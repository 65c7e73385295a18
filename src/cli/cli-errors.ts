import { MnemoError } from '../errors.ts';

/** A command-line flag, environment variable or config file that cannot be used as given. */
export class ConfigError extends MnemoError {
  readonly code = 'invalid_config';
}
