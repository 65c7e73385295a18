/** The background embedder as the recall service sees it (jobs/embed-drain.ts makes one). */
export interface DrainStatus {
  /** Requests sent, failed requests among them, vectors stored, since this drain started. */
  requests: number;
  failures: number;
  embedded: number;
}

export interface EmbeddingDrain {
  kick(): void;
  /** Resolves once nothing is due (every item embedded, gone, dead or waiting for a retry). */
  idle(): Promise<void>;
  status(): DrainStatus;
  /** Stops after the request in flight (its answer is not stored); resolves when stopped. */
  close(): Promise<void>;
}
