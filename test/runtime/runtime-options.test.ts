import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.ts';
import { startRuntime } from '../../src/runtime.ts';
import { resolveRuntimeOptions } from '../../src/runtime-options.ts';

// startRuntime checks every option before it starts or connects anything (runtime-options.ts).

const refused = (options: Parameters<typeof resolveRuntimeOptions>[0]): { option: unknown; message: string } => {
  try {
    resolveRuntimeOptions(options);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).code).toBe('invalid_option');
    return { option: (error as InvalidInputError).details?.['option'], message: (error as Error).message };
  }
  throw new Error('accepted');
};

describe('startRuntime options', () => {
  it('defaults every option', () => {
    expect(resolveRuntimeOptions({})).toMatchObject({ name: 'mnemo', dataDir: './data', storage: { kind: 'lmdb' }, idleMs: 60_000, maxLive: 10_000, recall: {}, retention: undefined });
    expect(resolveRuntimeOptions({ storage: { postgres: 'postgres://h/db', schema: 's' } }).storage).toEqual({ kind: 'postgres', url: 'postgres://h/db', schema: 's' });
  });

  it('names the option it refuses', () => {
    expect(refused({ name: '' }).option).toBe('name');
    expect(refused({ idleMs: -1 }).option).toBe('idleMs');
    expect(refused({ idleMs: Number.NaN }).option).toBe('idleMs');
    expect(refused({ maxLiveConversations: 0 }).option).toBe('maxLiveConversations');
    expect(refused({ storage: { postgres: '' } }).option).toBe('storage');
    expect(refused({ storage: 'sqlite' as never }).option).toBe('storage');
    expect(refused({ storage: 'memory', retention: { idleTtlMs: 1000 } })).toEqual({ option: 'retention', message: 'retention needs LMDB or PostgreSQL storage' });
    expect(refused({ retention: { idleTtlMs: 0 } }).option).toBe('retention.idleTtlMs');
  });

  it('refuses a bad option before it starts: retention on PostgreSQL without recall, with no database to reach', async () => {
    // A database nobody listens on, and retention it cannot have (its sweep is a job of recall's queue): refused before any connection.
    await expect(startRuntime({ storage: { postgres: 'postgres://postgres@127.0.0.1:1/none' }, recall: false, retention: { idleTtlMs: 1000 } })).rejects.toMatchObject({
      code: 'invalid_option',
      details: { option: 'retention' },
    });
  });
});
