/**
 * Sizes of each workload in the two modes. Quick: small, the whole suite in well under two
 * minutes (CI smoke runs). Full: the sizes. `capSeconds` bounds one adapter at one size:
 * a store whose cost grows with the data (JSONL, LangGraph) stops there, and its row says so.
 */
export interface Sizes {
  append: { levels: { conversations: number; perConversation: number }[]; capSeconds: number; warmup: number };
  tail: { lengths: number[]; window: number; reads: number; capSeconds: number };
  chat: { levels: { sessions: number; turnsPerSession: number }[]; capSeconds: number };
  restart: { totals: number[]; perConversation: number; repeats: number };
  rss: { touched: number[]; concurrency: number };
  search: { lengths: number[]; limit: number; searches: number; capSeconds: number };
  disk: { conversations: number; perConversation: number };
}

export const QUICK: Sizes = {
  append: {
    levels: [
      { conversations: 1, perConversation: 200 },
      { conversations: 100, perConversation: 10 },
      { conversations: 1000, perConversation: 2 },
    ],
    capSeconds: 3,
    warmup: 50,
  },
  tail: { lengths: [100, 1000], window: 50, reads: 200, capSeconds: 1 },
  chat: {
    levels: [
      { sessions: 1, turnsPerSession: 20 },
      { sessions: 10, turnsPerSession: 3 },
    ],
    capSeconds: 5,
  },
  restart: { totals: [1000, 10_000], perConversation: 100, repeats: 1 },
  rss: { touched: [100, 1000], concurrency: 100 },
  search: { lengths: [1000, 10_000], limit: 20, searches: 20, capSeconds: 1 },
  disk: { conversations: 10, perConversation: 20 },
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
  },
  tail: { lengths: [100, 1000, 10_000, 100_000], window: 50, reads: 2000, capSeconds: 3 },
  chat: {
    levels: [
      { sessions: 1, turnsPerSession: 300 },
      { sessions: 100, turnsPerSession: 10 },
    ],
    capSeconds: 20,
  },
  restart: { totals: [10_000, 100_000, 1_000_000], perConversation: 100, repeats: 3 },
  rss: { touched: [100, 1000, 10_000, 100_000], concurrency: 100 },
  search: { lengths: [1000, 10_000, 100_000], limit: 20, searches: 200, capSeconds: 3 },
  disk: { conversations: 100, perConversation: 100 },
};
