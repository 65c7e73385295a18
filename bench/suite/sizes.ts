/**
 * Sizes of each workload in the two modes. Quick: small, the whole suite in well under two
 * minutes (CI smoke runs). Full: the sizes. `capSeconds` bounds one adapter at one size:
 * a store whose cost grows with the data (JSONL, LangGraph) stops there, and its row says so.
 * `repeats`: the machine is shared and fsync latency is noisy, so append and chat run each
 * store several times, interleaved (store A, B, C, A, B, C, ...), and report the median run.
 */
export interface Sizes {
  append: { levels: { conversations: number; perConversation: number }[]; capSeconds: number; warmup: number; repeats: number };
  tail: { lengths: number[]; window: number; reads: number; capSeconds: number };
  chat: { levels: { sessions: number; turnsPerSession: number }[]; capSeconds: number; repeats: number };
  restart: { totals: number[]; perConversation: number; repeats: number };
  /** Import + open + first read in fresh processes (bench/suite/startup-run.ts): the store's size, runs per store. */
  startup: { messages: number; perConversation: number; runs: number };
  rss: { touched: number[]; concurrency: number; capSeconds: number };
  live: { conversations: number[] };
  search: { lengths: number[]; limit: number; searches: number; capSeconds: number };
  disk: { conversations: number; perConversation: number; capSeconds: number };
  /** One conversation's commits: `rounds` of `block` appends per store, the stores taking turns. */
  commit: { rounds: number; block: number };
  /** Offline chat turns of one session counted under strace. */
  turnFsyncs: { turns: number };
  /** One user's corpus for ranked search (`--ranked-size` overrides `size`); queries per class. */
  ranked: { size: number; perClass: number };
  /** One user's corpus whose ranked index is built (Mnemo's rebuild, FTS5), builds per engine. */
  indexBuild: { size: number; repeats: number };
  /** Chat turns at `conversations` conversations, `turns` each per run, `repeats` runs per user kind (indexed / not). */
  upkeep: { conversations: number; turns: number; repeats: number };
  /** bench/turn-cost.ts: samples per size (the whole-history case: `wholeSamples`). */
  turnCost: { samples: number; wholeSamples: number };
}

export const QUICK: Sizes = {
  append: {
    levels: [
      { conversations: 1, perConversation: 100 },
      { conversations: 100, perConversation: 5 },
      { conversations: 1000, perConversation: 1 },
    ],
    capSeconds: 1.5,
    warmup: 20,
    repeats: 1,
  },
  tail: { lengths: [100, 1000], window: 50, reads: 200, capSeconds: 0.5 },
  chat: {
    levels: [
      { sessions: 1, turnsPerSession: 20 },
      { sessions: 10, turnsPerSession: 3 },
    ],
    capSeconds: 3,
    repeats: 1,
  },
  restart: { totals: [2000], perConversation: 100, repeats: 1 },
  startup: { messages: 2000, perConversation: 100, runs: 2 },
  rss: { touched: [500], concurrency: 100, capSeconds: 10 },
  live: { conversations: [2000] },
  search: { lengths: [1000, 5000], limit: 20, searches: 10, capSeconds: 0.5 },
  disk: { conversations: 10, perConversation: 20, capSeconds: 10 },
  commit: { rounds: 10, block: 25 },
  turnFsyncs: { turns: 3 },
  ranked: { size: 20_000, perClass: 20 },
  indexBuild: { size: 20_000, repeats: 1 },
  upkeep: { conversations: 100, turns: 2, repeats: 2 },
  turnCost: { samples: 10, wholeSamples: 2 },
};

export const FULL: Sizes = {
  append: {
    levels: [
      { conversations: 1, perConversation: 3000 },
      { conversations: 100, perConversation: 100 },
      { conversations: 1000, perConversation: 20 },
    ],
    capSeconds: 20,
    warmup: 300,
    repeats: 3,
  },
  tail: { lengths: [100, 1000, 10_000, 100_000], window: 50, reads: 2000, capSeconds: 3 },
  chat: {
    levels: [
      { sessions: 1, turnsPerSession: 300 },
      { sessions: 100, turnsPerSession: 10 },
    ],
    capSeconds: 20,
    repeats: 3,
  },
  restart: { totals: [10_000, 100_000, 1_000_000], perConversation: 100, repeats: 3 },
  startup: { messages: 100_000, perConversation: 100, runs: 9 },
  rss: { touched: [100, 1000, 10_000, 100_000], concurrency: 100, capSeconds: 90 },
  live: { conversations: [10_000, 100_000] },
  search: { lengths: [1000, 10_000, 100_000], limit: 20, searches: 200, capSeconds: 3 },
  disk: { conversations: 1000, perConversation: 100, capSeconds: 300 },
  commit: { rounds: 60, block: 25 },
  turnFsyncs: { turns: 6 },
  ranked: { size: 1_000_000, perClass: 100 },
  indexBuild: { size: 200_000, repeats: 3 },
  upkeep: { conversations: 100, turns: 20, repeats: 7 },
  turnCost: { samples: 200, wholeSamples: 20 },
};
