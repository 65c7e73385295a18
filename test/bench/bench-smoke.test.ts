import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunResult } from '../../bench/suite/result-types.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

function bench(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(TSX, ['bench/run.ts', ...args], { cwd: ROOT, timeout: 170_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('npm run bench (quick mode, one tiny workload)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it(
    'writes the run as JSON (per run and latest), a Markdown table and an SVG chart',
    async () => {
      const out = mkdtempSync(join(tmpdir(), 'mnemo-bench-smoke-'));
      dirs.push(out);
      const run = await bench(['--quick', '--only', 'disk', '--adapters', 'raw-lmdb,mnemo-lmdb,jsonl', '--out', out]);
      expect(run.stderr).not.toMatch(/bench: /);
      expect(run.code).toBe(0);

      const files = readdirSync(out).sort();
      const perRun = files.filter((f) => /^run-.*\.json$/.test(f));
      expect(perRun).toHaveLength(1);
      expect(files).toEqual(expect.arrayContaining(['latest.json', 'latest.md', 'disk-bytes.svg']));

      const latest = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8')) as RunResult;
      expect(readFileSync(join(out, perRun[0]!), 'utf8')).toBe(readFileSync(join(out, 'latest.json'), 'utf8'));
      expect(latest.schema).toBe(1);
      expect(latest.mode).toBe('quick');
      expect(latest.adapters.map((a) => a.id)).toEqual(['raw-lmdb', 'mnemo-lmdb', 'jsonl']);
      expect(latest.workloads.map((w) => w.id)).toEqual(['disk']);
      const disk = latest.workloads[0]!;
      expect(disk.rows.map((r) => r.adapter)).toEqual(['raw-lmdb', 'mnemo-lmdb', 'jsonl']);
      for (const row of disk.rows) {
        expect(row.x).toBe(200);
        expect(row.metrics['bytesPerMessage']).toBeGreaterThan(0);
        expect(row.metrics['payloadPerMessage']).toBeGreaterThan(0);
      }

      const md = readFileSync(join(out, 'latest.md'), 'utf8');
      expect(md).toContain('## Bytes on disk per message');
      expect(md).toMatch(/^\| messages \| store \| allocated B\/msg \|/m);
      for (const label of ['raw lmdb-js', 'Mnemo (LMDB)', 'JSONL (demo)']) expect(md).toContain(`| 200 | ${label} |`);

      const svg = readFileSync(join(out, 'disk-bytes.svg'), 'utf8');
      expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
      expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
      expect(svg.match(/<rect [^>]*fill="#/g)?.length).toBeGreaterThanOrEqual(3 + 3);
      for (const label of ['raw lmdb-js', 'Mnemo (LMDB)', 'JSONL (demo)']) expect(svg).toContain(`>${label}</text>`);
    },
    180_000,
  );

  it('refuses an unknown workload with a non-zero exit and writes nothing', async () => {
    const out = mkdtempSync(join(tmpdir(), 'mnemo-bench-smoke-'));
    dirs.push(out);
    const run = await bench(['--quick', '--only', 'nope', '--out', out]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("unknown workload 'nope'");
    expect(readdirSync(out)).toEqual([]);
  }, 60_000);
});
