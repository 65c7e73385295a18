/**
 * What a runtime hands the children it starts beside its own (`RuntimeOptions.children`: an
 * HTTP server, a LangGraph thread supervisor): its name, the default store, and what that store
 * is built on.
 */
import type { Database, DatabaseOptions, RootDatabase } from 'lmdb';
import type { MessageLog } from './memory/contract/message-log.ts';

/** What extra children may use. */
export interface RuntimeParts {
  /** The runtime's name (`RuntimeOptions.name`). */
  readonly name: string;
  /**
   * The default store: each conversation's writes go through its own actor; reads go straight to
   * storage.
   */
  readonly memory: MessageLog;
  /** What the store is built on. */
  readonly storage: RuntimeStorage;
}

/** The store's foundation. Discriminated by `kind`. */
export type RuntimeStorage =
  | {
      /** LMDB in `dataDir`. */
      readonly kind: 'lmdb';
      /** The resolved data directory. */
      readonly path: string;
      /**
       * The runtime's LMDB environment (open from start to stop; throws `store_closed`
       * after). Use it for transactions spanning your databases. `compact()` replaces it (and
       * closes the old one): read it when you use it, or open your handles in a child of the
       * tree (`children`), which a compaction restarts.
       */
      readonly root: RootDatabase;
      /**
       * Open (or create) a named database in the runtime's environment. Cheap and idempotent;
       * handles stay valid until `stop()` or `compact()` (which closes the environment they
       * belong to). The name `messages` is the message store's own and
       * is refused, and `mnemo_health` is the readiness probe's (`health()`). At most 30 names
       * besides them (`lmdb.maxDbs`, default 32).
       */
      openDB<V = unknown, K extends import('lmdb').Key = import('lmdb').Key>(name: string, options?: DatabaseOptions): Database<V, K>;
    }
  | {
      /** In process memory. */
      readonly kind: 'memory';
    }
  | {
      /** Your own store, or PostgreSQL. */
      readonly kind: 'custom';
      /** That store. */
      readonly store: MessageLog;
    };
