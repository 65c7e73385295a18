import { spawn } from 'node:child_process';
import { existsSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLmdbStore } from '../../src/memory/index.ts';
import { COMPACTION_STEPS } from '../../src/memory/lmdb/lmdb-environment.ts';
import { COMPACTING_DIR } from '../../src/memory/lmdb/compacting-copy.ts';
import { startRuntime } from '../../src/runtime.ts';
import { tempDir } from '../support/runtime-fixtures.ts';

// SIGKILL a runtime at each named step of runtime.compact(): the directory must open with the
// old data file or the new one, never neither, and hold every acknowledged append at its id.

const writer = join(import.meta.dirname, '../programs/compaction-kill-writer.ts');
const root = tempDir('mnemo-compact-kill-');
afterAll(() => root.remove());

interface Run {
  acks: Array<{ conversation: string; id: number; content: string }>;
  bytesBefore: number;
  reached: string | undefined;
  signal: string | null;
}

function run(dir: string, stopAt: string, copy: 'pages' | 'rebuild'): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', writer, dir, stopAt, copy], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL' && code !== 0) return reject(new Error(`writer exited ${code}: ${err}`));
      const lines = out.slice(0, out.lastIndexOf('\n') + 1).split('\n');
      resolve({
        acks: lines
          .filter((l) => l.startsWith('ack '))
          .map((l) => {
            const [, conversation, id, content] = l.split(' ');
            return { conversation: conversation!, id: Number(id), content: content! };
          }),
        bytesBefore: Number(lines.find((l) => l.startsWith('bytes '))?.slice(6)),
        reached: lines.find((l) => l.startsWith('at '))?.slice(3),
        signal,
      });
    });
  });
}

async function expectAcknowledged(dir: string, acks: Run['acks']): Promise<void> {
  const store = createLmdbStore({ path: dir });
  try {
    for (let c = 0; c < 10; c++) {
      const records = await store.range(`conv-${c}`);
      records.forEach((r, i) => expect(r.message_id, `conv-${c} position ${i}`).toBe(i + 1));
      const stored = new Map(records.map((r) => [r.message_id, r.message.content as string]));
      for (const a of acks.filter((x) => x.conversation === `conv-${c}`)) expect(stored.get(a.id), `acknowledged ${a.conversation} ${a.id}`).toBe(a.content);
    }
  } finally {
    await store.close();
  }
}

describe('SIGKILL during runtime.compact()', () => {
  const cases = (['pages', 'rebuild'] as const).flatMap((copy) => COMPACTION_STEPS.filter((s) => copy === 'rebuild' || s !== 'rebuilding').map((step) => ({ copy, step })));
  for (const { copy, step } of cases) {
    it(`${copy}, at '${step}': the directory opens with every acknowledged append`, async () => {
      const dir = join(root.path, `${copy}-${step}`);
      const r = await run(dir, step, copy);
      expect(r.signal).toBe('SIGKILL');
      expect(r.reached).toBe(step);
      expect(r.acks.length).toBe(300);
      const swapped = step === 'swapped' || step === 'reopened';
      // The old file before the rename, the new (smaller) one from it on.
      const bytes = statSync(join(dir, 'data.mdb')).size;
      if (swapped) expect(bytes).toBeLessThan(r.bytesBefore);
      else expect(bytes).toBe(r.bytesBefore);
      // A rebuild killed midway leaves its copy partly written.
      if (step === 'rebuilding') expect(existsSync(join(dir, COMPACTING_DIR, 'data.mdb'))).toBe(true);
      if (step === 'copied' || step === 'closed') {
        expect(existsSync(join(dir, COMPACTING_DIR, 'data.mdb'))).toBe(true);
        // A copy cut short (a kill while it was written) is as harmless as a whole one.
        truncateSync(join(dir, COMPACTING_DIR, 'data.mdb'), 8192);
      }
      await expectAcknowledged(dir, r.acks);
      expect(existsSync(join(dir, COMPACTING_DIR))).toBe(false);
      // And it compacts again, and runs on.
      const rt = await startRuntime({ dataDir: dir, recall: false });
      try {
        expect((await rt.compact({ copy })).bytesAfter).toBeLessThan(r.bytesBefore);
        expect((await rt.memory.append('conv-0', [{ message: { role: 'user', content: 'after' } }]))[0]!.message_id).toBe(31);
      } finally {
        await rt.stop();
      }
    }, 60_000);
  }

  it('without a kill, the appends held during the pause are stored after those before it', async () => {
    const dir = join(root.path, 'none');
    const r = await run(dir, 'none', 'rebuild');
    expect(r.signal).toBe(null);
    expect(r.acks.filter((a) => a.content.startsWith('held-')).map((a) => a.id)).toEqual(Array(10).fill(31));
    await expectAcknowledged(dir, r.acks);
  }, 60_000);
});
