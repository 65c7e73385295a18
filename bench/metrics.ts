/**
 * bench/metrics.ts: the cost of a Prometheus scrape of `/metrics` with many live conversations.
 *
 *   npx tsx bench/metrics.ts              10 000 live conversations, 300 scrapes
 *   npx tsx bench/metrics.ts --quick      1 000 live conversations, 100 scrapes
 *   ... --no-default-metrics              without prom-client's process metrics
 *
 * A runtime on a temp LMDB dir (idle timeout long enough that nothing passivates), wired to the
 * server's metrics as `mnemo` wires them; one message appended to each of N conversations so N
 * conversation actors are live; then sequential `GET /metrics` over loopback (keep-alive, as
 * Prometheus scrapes), timed from request to last byte. The first 20 scrapes are warm-up.
 * Target: p50 ≤ 5 ms at 10 000 live conversations. Writes bench/results/metrics.json.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRuntime } from '../src/runtime.ts';
import { createServerMetrics } from '../src/server/metrics.ts';
import { startServer } from '../src/server/server.ts';
import { Samples } from './suite/stats.ts';
import { makeTempDir } from './suite/temp-dir.ts';

const quick = process.argv.includes('--quick');
const CONVERSATIONS = quick ? 1_000 : 10_000;
const SCRAPES = quick ? 100 : 300;
const WARMUP = 20;
const TARGET_MS = 5;

const dataDir = makeTempDir('metrics');
const metrics = createServerMetrics({ defaultMetrics: !process.argv.includes('--no-default-metrics') });
const runtime = await startRuntime({
  name: 'mnemo_bench_metrics',
  dataDir,
  idleMs: 3_600_000,
  maxLiveConversations: CONVERSATIONS,
  observer: metrics.writeObserver,
});
const server = await startServer({ recall: runtime.recall, runtime, host: '127.0.0.1', port: 0, metrics });
try {
  const BATCH = 500;
  for (let i = 0; i < CONVERSATIONS; i += BATCH) {
    const writes: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(CONVERSATIONS, i + BATCH); j++) {
      writes.push(runtime.memory.append(`bench-conversation-${j}`, [{ message: { role: 'user', content: `hello ${j}` } }]));
    }
    await Promise.all(writes);
  }
  const live = runtime.liveConversations;
  if (live < CONVERSATIONS) throw new Error(`only ${live} of ${CONVERSATIONS} conversations are live`);

  const samples = new Samples();
  let bytes = 0;
  for (let i = 0; i < WARMUP + SCRAPES; i++) {
    const started = performance.now();
    const res = await fetch(`${server.url}/metrics`);
    const body = await res.text();
    const ms = performance.now() - started;
    if (res.status !== 200 || !body.includes(`mnemo_live_conversations ${live}`)) throw new Error(`bad scrape: ${res.status}`);
    if (i >= WARMUP) samples.add(ms);
    bytes = body.length;
  }
  const s = samples.summary();
  const result = {
    conversations: live,
    scrapes: s.count,
    scrapeBytes: bytes,
    meanMs: s.meanMs,
    p50Ms: s.p50Ms,
    p99Ms: s.p99Ms,
    maxMs: s.maxMs,
    targetMs: TARGET_MS,
    met: s.p50Ms <= TARGET_MS,
    cpus: cpus().length,
    loadavg: loadavg(),
  };
  const f = (x: number) => x.toFixed(2);
  console.log(
    `/metrics with ${live} live conversations (${bytes} bytes): p50 ${f(s.p50Ms)} ms, p99 ${f(s.p99Ms)} ms, ` +
      `max ${f(s.maxMs)} ms over ${s.count} scrapes — target p50 ≤ ${TARGET_MS} ms: ${result.met ? 'met' : 'NOT met'} ` +
      `(load ${loadavg().map((l) => l.toFixed(1)).join(' ')})`,
  );
  if (!quick) {
    const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'metrics.json');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  }
} finally {
  await server.close();
  await runtime.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
