import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunResult } from '../../bench/suite/result-types.ts';
import { postgresUrl } from '../support/postgres-server.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

function bench(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(TSX, ['bench/run.ts', ...args], { cwd: ROOT, timeout: 170_000, env }, (error, stdout, stderr) => {
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

  it(
    'runs the index build beside FTS5, and Mnemo on PostgreSQL where MNEMO_PG_URL names a server (skipped with a note where not)',
    async () => {
      const url = await postgresUrl();
      const withPg = mkdtempSync(join(tmpdir(), 'mnemo-bench-smoke-'));
      const withoutPg = mkdtempSync(join(tmpdir(), 'mnemo-bench-smoke-'));
      dirs.push(withPg, withoutPg);
      const args = ['--quick', '--only', 'disk,index-build', '--adapters', 'mnemo-lmdb,mnemo-postgres'];
      const { MNEMO_PG_URL: _drop, ...noPg } = process.env;
      const [a, b] = await Promise.all([bench([...args, '--out', withPg], { ...process.env, MNEMO_PG_URL: url }), bench([...args, '--out', withoutPg], noPg)]);
      expect(a.stderr).not.toMatch(/bench: /);
      expect(b.stderr).not.toMatch(/bench: /);
      expect([a.code, b.code]).toEqual([0, 0]);

      const read = (dir: string) => JSON.parse(readFileSync(join(dir, 'latest.json'), 'utf8')) as RunResult;
      const ran = read(withPg);
      expect(ran.workloads.map((w) => w.id)).toEqual(['disk', 'index-build']);
      const disk = ran.workloads[0]!;
      expect(disk.rows.map((r) => r.adapter)).toEqual(['mnemo-lmdb', 'mnemo-postgres']);
      for (const row of disk.rows) expect(row.metrics['bytesPerMessage']).toBeGreaterThan(row.metrics['payloadPerMessage']!);
      const build = ran.workloads[1]!;
      expect(build.rows.map((r) => [r.adapter, r.x])).toEqual([
        ['mnemo-lmdb', 20_000],
        ['sqlite-fts5', 20_000],
      ]);
      for (const row of build.rows) expect(row.metrics['buildS']).toBeGreaterThan(0);
      expect(readFileSync(join(withPg, 'latest.md'), 'utf8')).toContain('| 20,000 | SQLite FTS5 bm25 |');

      // Each PostgreSQL store drops its schema when it closes.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const left = await client.query("SELECT nspname FROM pg_namespace WHERE nspname ~ '^bench_[0-9a-f]{16}$'");
        expect(left.rows).toEqual([]);
      } finally {
        await client.end();
      }

      const skipped = read(withoutPg).workloads[0]!;
      expect(skipped.rows.map((r) => r.adapter)).toEqual(['mnemo-lmdb']);
      expect(skipped.notes).toContain('Mnemo (PostgreSQL) skipped: MNEMO_PG_URL is not set (eval "$(scripts/postgres.sh start)" sets it).');
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
