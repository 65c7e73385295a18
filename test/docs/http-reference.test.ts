import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRuntime, type Runtime } from '../../src/index.ts';
import { createServer } from '../../src/server/index.ts';
import { ROOT } from './docs-pages.ts';

// docs/reference/http.md against the server: every route of /openapi.json is a row of the
// page's table (as `METHOD /path`), and every row names a route the server answers.

const PAGE = readFileSync(join(ROOT, 'docs', 'reference', 'http.md'), 'utf8');
const documented = [...PAGE.matchAll(/^\| `(GET|POST|PUT|PATCH|DELETE) (\/[^`]*)` \|/gm)].map((m) => `${m[1]} ${m[2]}`);

let dir: string;
let runtime: Runtime;
let routes: string[];
let app: ReturnType<typeof createServer>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mnemo-http-ref-'));
  runtime = await startRuntime({ dataDir: dir, name: 'mnemo_http_ref' });
  app = createServer({ recall: runtime.recall, runtime });
  await app.ready();
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
  routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
});

afterAll(async () => {
  await app.close();
  await runtime.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('docs/reference/http.md', () => {
  it('has a row for every route of /openapi.json', () => {
    expect(routes.length).toBeGreaterThan(20);
    expect(routes.filter((r) => !documented.includes(r))).toEqual([]);
  });

  it('documents no route the server does not have', () => {
    // The routes /openapi.json leaves out on purpose, answered all the same.
    const unlisted = ['GET /openapi.json', 'GET /', 'POST /mcp'];
    const known = new Set([...routes, ...unlisted]);
    expect(documented.filter((r) => !known.has(r))).toEqual([]);
    for (const extra of unlisted) {
      const [method, url] = extra.split(' ') as ['GET' | 'POST', string];
      expect(app.hasRoute({ method, url }), extra).toBe(true);
    }
  });
});
