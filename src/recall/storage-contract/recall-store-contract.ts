import { describe } from 'vitest';
import type { MakeRecallStore } from './contract-kit.ts';
import { describeEmbeddingCases } from './embedding-cases.ts';
import { describeJobQueueCases } from './job-queue-cases.ts';
import { describeStoreCases } from './store-cases.ts';

export type { MakeRecallStore, RecallStoreContractOptions, RecallStoreUnderTest } from './contract-kit.ts';

/**
 * The conformance suite of the storage port (recall-store.ts, job-queue.ts): what every
 * `RecallStore` adapter must do, as vitest tests, each on a fresh, empty store from the
 * adapter's factory. It tests only what the port's doc comments promise (USERS, ATOMICITY's
 * visibility, DERIVED DATA, GUARDS, RANKING, KEYWORD SCANS, the queue's IDENTITY, LEASES,
 * EFFECTS, TIME and OUTCOMES), with inputs built the way the domain builds them (a turn as
 * `recordTurn` appends it, facts changes from the facts rules, scores from search/bm25.ts):
 * never an engine's keys, files or timing.
 * It stands beside storage/, not inside it: those inputs come from the domain's own rules
 * (facts/, search/), which sit above the port they are written through.
 *
 * TIME. The factory gets a clock the suite moves by hand (`advance`): a store whose queue
 * reckons time by it (LMDB) sees a lease expire or a retry fall due at once. A store whose
 * database keeps its own time (PostgreSQL) may ignore it: each advance is also waited out in
 * real time, and the suite only ever advances past leases and retries of `SHORT_MS` (a few
 * tens of ms), so the suite stays fast either way.
 */

/**
 * Registers, under `describe(name)`, the tests every `RecallStore` adapter must pass (the port's
 * promises, recall-store.ts and job-queue.ts), each on a fresh, empty store from `make`: once
 * opened without embeddings and once with (`embeddings: true`), plus the embedding tests.
 * `describeJobQueueContract` (the queue's part) runs inside it.
 */
export function describeRecallStoreContract(name: string, make: MakeRecallStore): void {
  describe(`${name}: RecallStore contract`, () => {
    for (const embeddings of [false, true]) {
      describe(embeddings ? 'with embeddings' : 'without embeddings', () => {
        describeStoreCases(make, embeddings);
      });
    }
    describeEmbeddingCases(make);
    describeJobQueueCases(make);
  });
}

/**
 * Registers, under `describe(name)`, the job-queue tests alone (job-queue.ts: IDENTITY, LEASES,
 * EFFECTS, TIME, OUTCOMES) on `store.jobs` of a fresh store from `make`. Part of
 * `describeRecallStoreContract`; for running the queue's part on its own.
 */
export function describeJobQueueContract(name: string, make: MakeRecallStore): void {
  describe(`${name}: JobQueue contract`, () => {
    describeJobQueueCases(make);
  });
}
