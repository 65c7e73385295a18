/**
 * LangGraph's own conformance suite for checkpointers (@langchain/langgraph-checkpoint-validation),
 * run whole against MnemoSaver, plus its opt-in delta-channel history suite. The package's specs
 * use vitest's globals, so they are installed before the suite is defined.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MnemoSaver } from '../../src/langgraph/index.ts';

Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it });
const { validate, deltaChannelHistoryTests } = await import('@langchain/langgraph-checkpoint-validation');

const dirs = new Map<MnemoSaver, string>();

const initializer = {
  checkpointerName: 'MnemoSaver',
  createCheckpointer: () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-lg-validation-'));
    const saver = new MnemoSaver({ path: dir });
    dirs.set(saver, dir);
    return saver;
  },
  destroyCheckpointer: async (saver: MnemoSaver) => {
    await saver.close();
    rmSync(dirs.get(saver) ?? '', { recursive: true, force: true });
    dirs.delete(saver);
  },
};

validate(initializer);
deltaChannelHistoryTests(initializer);
