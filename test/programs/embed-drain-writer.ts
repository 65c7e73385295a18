/**
 * The embedding drain's kill test program: starts a runtime on a data directory with
 * embeddings on the given endpoint (batches of 4), then
 * - `write <turns>`: runs that many offline chat turns (two rows each), prints `written`, and
 *   waits to be killed while the supervised drain works through the queue;
 * - `drain`: waits until the queue is empty, prints the embeddings status as JSON, stops.
 *
 * Usage: tsx embed-drain-writer.ts <data dir> <base URL> write <turns> | drain
 */
import { startRuntime } from '../../src/runtime.ts';

const [dir, baseURL, mode, turns] = [process.argv[2]!, process.argv[3]!, process.argv[4]!, Number(process.argv[5] ?? 0)];
const runtime = await startRuntime({
  dataDir: dir,
  lmdb: { noSync: true },
  recall: { pool: false, embeddings: { baseURL, apiKey: 'test', model: 'stub-embed', batchSize: 4, retryBaseMs: 1, requestsPerMinute: 60_000, burst: 1000 } },
});
if (mode === 'write') {
  for (let k = 0; k < turns; k++) await runtime.recall.chat({ userId: 'u', sessionId: 's', message: `turn ${k} about dogs and houses` });
  process.stdout.write('written\n');
  setInterval(() => undefined, 1000);
} else {
  await runtime.recall.embeddingsIdle();
  process.stdout.write(`${JSON.stringify(await runtime.recall.embeddingsStatus('u'))}\n`);
  await runtime.stop();
}
