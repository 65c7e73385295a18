import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import type { PGlite, Results } from '@electric-sql/pglite';
import pg from 'pg';

/**
 * A node-postgres `Pool` whose connections all run on ONE PGlite instance (PostgreSQL in WASM,
 * in this process), so the PostgreSQL adapters run unchanged on it: `pglitePool(db)` is a real
 * `pg.Pool` (pg-pool's own checkout, release and `end`) made with a `Client` that talks to PGlite.
 * Pools the adapters derive from it (`newPool`: session locks, the `LISTEN` connection) copy its
 * options, so they share the instance too. For tests of one process only: never for concurrency.
 *
 * What one connection changes, and how it is made to hold:
 * - TRANSACTIONS: PGlite has one session, so a client's `BEGIN` takes a gate that every other
 *   client's statements wait for, until its `COMMIT`/`ROLLBACK` (or its `end`, which rolls back):
 *   no statement of another client ever runs inside it. A transaction's body that waited on a
 *   query of another client would wait forever (on a real server it would not): none does.
 * - ADVISORY LOCKS: every client is the same backend, so `pg_advisory_lock` never blocks (it is
 *   reentrant); the adapter's in-process queue of a session's turns still orders them.
 *   `FOR UPDATE`, `SKIP LOCKED` and advisory transaction locks likewise never wait.
 * - `LISTEN`/`NOTIFY`: a client that ran `LISTEN channel` gets `notification` events for it
 *   (through PGlite's `onNotification`).
 * - NAMED PREPARED STATEMENTS: the name is ignored (each statement is parsed again).
 * - TYPES as node-postgres returns them: parameters are prepared by pg's own `prepareValue`
 *   and sent as text (Buffers as bytea); `int8` and `numeric` come back as strings, `bytea` as
 *   Buffers, json parsed, timestamps as Dates; `rowCount` is rows affected or returned.
 */
export function pglitePool(db: PGlite, max = 10): pg.Pool {
  return new pg.Pool({ max, Client: PGliteClient as unknown as typeof pg.Client, pglite: db } as pg.PoolConfig);
}

interface Shared {
  /** Resolves when the gate is free; `owner` holds it. */
  gate: Promise<void>;
  owner: PGliteClient | undefined;
  clients: Set<PGliteClient>;
}

const sharedOf = new WeakMap<PGlite, Shared>();

function shared(db: PGlite): Shared {
  let s = sharedOf.get(db);
  if (s === undefined) {
    const made: Shared = { gate: Promise.resolve(), owner: undefined, clients: new Set() };
    void db.onNotification((channel, payload) => {
      for (const c of made.clients) if (c.channels.has(channel)) c.emit('notification', { channel, payload, processId: 0 });
    });
    sharedOf.set(db, (s = made));
  }
  return s;
}

// Text in, text out, as node-postgres sends and reads.
const asText = new Proxy({}, { get: () => (x: unknown) => x }) as Record<number, (x: unknown) => string>;
const PARSERS = {
  20: (x: string) => x, // int8
  1700: (x: string) => x, // numeric
  17: (x: string) => Buffer.from(x.slice(2), 'hex'), // bytea
};

const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (v: unknown) => unknown };

const BEGINS = /^\s*(BEGIN|START\s+TRANSACTION)\b/i;
const ENDS = /^\s*(COMMIT|END|ABORT|ROLLBACK)\s*(;?\s*$|AND\b|WORK\b|TRANSACTION\b)/i;
const LISTEN = /^\s*LISTEN\s+("?)([^"\s;]+)\1/i;

type Callback = (error: Error | null, result?: unknown) => void;

class PGliteClient extends EventEmitter {
  readonly channels = new Set<string>();
  _queryable = true;
  _ending = false;
  private readonly db: PGlite;
  private readonly shared: Shared;
  /** Releases the gate this client holds (in a transaction). */
  private held: (() => void) | undefined;

  constructor(options: { pglite: PGlite }) {
    super();
    this.db = options.pglite;
    this.shared = shared(this.db);
    this.shared.clients.add(this);
  }

  connect(callback?: (error?: Error) => void): Promise<void> {
    callback?.();
    return Promise.resolve();
  }

  isConnected(): boolean {
    return !this._ending;
  }

  ref(): void {}
  unref(): void {}

  query(config: string | { text: string; values?: unknown[] }, values?: unknown[] | Callback, callback?: Callback): Promise<unknown> | undefined {
    const cb = typeof values === 'function' ? values : callback;
    const text = typeof config === 'string' ? config : config.text;
    const params = Array.isArray(values) ? values : typeof config === 'string' ? undefined : config.values;
    const done = this.run(text, params);
    if (cb === undefined) return done;
    done.then((r) => cb(null, r), (e: Error) => cb(e));
    return undefined;
  }

  end(callback?: () => void): Promise<void> {
    const ended = (async () => {
      if (this._ending) return;
      this._ending = true;
      this._queryable = false;
      this.shared.clients.delete(this);
      if (this.held !== undefined) {
        await this.db.exec('ROLLBACK').catch(() => undefined);
        this.free();
      }
      this.emit('end');
    })();
    if (callback !== undefined) void ended.then(callback);
    return ended;
  }

  private async take(): Promise<void> {
    const before = this.shared.gate;
    let release!: () => void;
    this.shared.gate = new Promise<void>((resolve) => (release = resolve));
    await before;
    this.shared.owner = this;
    this.held = release;
  }

  private free(): void {
    const release = this.held;
    this.held = undefined;
    if (this.shared.owner === this) this.shared.owner = undefined;
    release?.();
  }

  private async run(text: string, params: readonly unknown[] | undefined): Promise<unknown> {
    if (this._ending) throw new Error('Client was closed and is not queryable');
    const inside = this.shared.owner === this;
    if (!inside) await this.take();
    try {
      const result = await this.send(text, params);
      const listen = LISTEN.exec(text);
      if (listen !== null) this.channels.add(listen[2]!);
      return result;
    } finally {
      // A statement outside a transaction, or the end of one: the gate is free again.
      if ((!inside && !BEGINS.test(text)) || ENDS.test(text)) this.free();
    }
  }

  private async send(text: string, params: readonly unknown[] | undefined): Promise<unknown> {
    if (params === undefined || params.length === 0) {
      // Simple protocol: several statements may be sent at once (migrations); pg answers one
      // statement's result, or an array of them.
      const results = await this.db.exec(text, { parsers: PARSERS });
      const shaped = results.map(toPgResult);
      return shaped.length === 1 ? shaped[0] : shaped;
    }
    const values = params.map((v) => {
      const p = prepareValue(v);
      return Buffer.isBuffer(p) ? new Uint8Array(p.buffer, p.byteOffset, p.byteLength) : p;
    });
    return toPgResult(await this.db.query(text, values, { parsers: PARSERS, serializers: asText }));
  }
}

function toPgResult(r: Results): { rows: unknown[]; rowCount: number; fields: unknown[]; command: string } {
  const rows = r.rows as unknown[];
  return { rows, rowCount: Math.max(r.affectedRows ?? 0, rows.length), fields: r.fields, command: '' };
}
