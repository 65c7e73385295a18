/**
 * A child process for test/postgres/recall-processes.test.ts: a runtime on the PostgreSQL
 * schema in `RECALL_TURNS` (JSON: url, schema, userId, sessions, turns, label), which takes
 * `turns` chat turns in each of `sessions` (the sessions concurrently, each session's turns one
 * after another), prints `turn <session> <userRowId>` per turn and `done` at the end, and exits 0.
 */
import { createPostgresStore } from '../../src/memory/postgres/index.ts';
import { startRuntime } from '../../src/runtime.ts';

interface Job {
  url: string;
  schema: string;
  userId: string;
  sessions: string[];
  turns: number;
  label: string;
}

const job = JSON.parse(process.env['RECALL_TURNS'] ?? '{}') as Job;
const store = createPostgresStore({ connectionString: job.url, schema: job.schema });
const runtime = await startRuntime({ name: `recall_turns_${job.label}`, storage: { store } });
await Promise.all(
  job.sessions.map(async (sessionId) => {
    for (let i = 0; i < job.turns; i++) {
      await runtime.recall.chat({ userId: job.userId, sessionId, message: `${job.label} says ${i} in ${sessionId}` });
      process.stdout.write(`turn ${sessionId} ${i}\n`);
    }
  }),
);
process.stdout.write('done\n');
await runtime.stop();
await store.close();
