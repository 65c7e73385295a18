/** MnemoStore on LMDB (a data directory per test): the shared suite, store-suite.ts. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MnemoStore } from '../../src/langgraph/index.ts';
import { describeMnemoStore } from './store-suite.ts';

let dir = '';

describeMnemoStore('MnemoStore on LMDB', {
  setUp: () => void (dir = mkdtempSync(join(tmpdir(), 'mnemo-lg-store-'))),
  open: (settings) => new MnemoStore({ path: dir, ...settings }),
  tearDown: () => rmSync(dir, { recursive: true, force: true }),
});
