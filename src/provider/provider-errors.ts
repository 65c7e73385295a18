import { MnemoError } from '../errors.ts';

/** A memory setting that cannot work (a window of 0, a store that is not one, ...). Nothing was created. */
export class InvalidMemoryConfigError extends MnemoError {
  /** Always `'invalid_memory_config'`. */
  readonly code = 'invalid_memory_config';
  constructor(
    message: string,
    /** The setting that was refused. */
    readonly value?: unknown,
  ) {
    super(message);
  }
}
