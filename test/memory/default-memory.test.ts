import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const tsx = join(import.meta.dirname, '../../node_modules/.bin/tsx');
const fixture = join(import.meta.dirname, '../programs/orphan-memory.ts');

function runOrphan(cwd: string, text: string) {
  const run = spawnSync(tsx, [fixture, text], { cwd, encoding: 'utf8', timeout: 60_000 });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as { warnings: string[]; same: boolean; messages: Array<{ content: string }> };
}

describe('defaultMemory() without a runtime', () => {
  it('falls back to one unsupervised LMDB store under ./data, warning once, and keeps what it stored', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'mnemo-orphan-'));
    try {
      const first = runOrphan(cwd, 'one');
      expect(first.same).toBe(true);
      expect(first.warnings).toHaveLength(1);
      expect(first.warnings[0]).toMatch(/^MNEMO_ORPHAN_MEMORY: .*unsupervised LMDB store under \.\/data/);
      expect(existsSync(join(cwd, 'data', 'data.mdb'))).toBe(true);
      const second = runOrphan(cwd, 'two');
      expect(second.messages.map((m) => m.content)).toEqual(['one', 'two']);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
