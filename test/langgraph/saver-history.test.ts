/** MnemoSaver's single-writer semantics on LMDB (a data directory per test): saver-history-suite.ts. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MnemoSaver } from '../../src/langgraph/index.ts';
import { describeSaverHistory } from './saver-history-suite.ts';

let dir = '';

describeSaverHistory('MnemoSaver on LMDB', {
  setUp: () => void (dir = mkdtempSync(join(tmpdir(), 'mnemo-lg-history-'))),
  open: () => new MnemoSaver({ path: dir }),
  tearDown: () => rmSync(dir, { recursive: true, force: true }),
});
