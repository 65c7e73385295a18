/**
 * `mnemo migrate --postgres URL [--pg-schema NAME]`: brings a PostgreSQL schema to the tables
 * this version of Mnemo uses (the message store's, the layered memory's and LangGraph's), then exits, so a
 * deploy can migrate once before its servers start (each server also migrates at start, under
 * the same advisory locks, so skipping this is safe too: it is for roles and change windows).
 *
 * Idempotent: a schema already up to date is left as it is. Prints one JSON line on success,
 * `{"migrated": SCHEMA, "recall_version": n, "langgraph_version": n, "vectors": "pgvector" | "bytea", "ms"}`, exit 0; bad options exit 2 (ConfigError);
 * an unreachable database or a refused statement exits 1 with `mnemo: <code>: <message>`.
 */
import { ConfigError, parseFlags } from './cli-errors.ts';
import { parsePostgresOptions } from './cli-options.ts';

export const MIGRATE_HELP = `Usage: mnemo migrate --postgres <url> [--pg-schema <name>]

Creates or updates Mnemo's tables in a PostgreSQL schema (the message store's, the
layered memory's and the LangGraph saver's and store's), then exits. Safe to run while servers run, and more than once; servers
also migrate at start, so this is for deploys that migrate ahead.

  --postgres <url>    MNEMO_DATABASE_URL, DATABASE_URL   postgres://user:password@host:port/db
  --pg-schema <name>  MNEMO_PG_SCHEMA                    schema of Mnemo's tables   [mnemo]
  -h, --help                                             print this help and exit
`;

export interface MigrateOptions {
  postgres: { url: string; schema?: string } | null;
  help: boolean;
}

export function parseMigrateOptions(argv: readonly string[], env: NodeJS.ProcessEnv): MigrateOptions {
  const values = parseFlags(argv, { postgres: { type: 'string' }, 'pg-schema': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, 'mnemo migrate');
  if (values.help === true) return { postgres: null, help: true };
  const postgres = parsePostgresOptions(values.postgres, values['pg-schema'], env);
  if (postgres === null) throw new ConfigError('mnemo migrate needs --postgres (or MNEMO_DATABASE_URL, DATABASE_URL)');
  return { postgres, help: false };
}

/** Runs the command; resolves with its exit code. */
export async function runMigrate(options: MigrateOptions): Promise<number> {
  if (options.help || options.postgres === null) {
    process.stdout.write(MIGRATE_HELP);
    return 0;
  }
  const { migratePostgres } = await import('../recall/storage/postgres/index.ts');
  const { migrateLangGraphPostgres } = await import('../langgraph/storage/postgres/langgraph-schema.ts');
  const started = performance.now();
  try {
    const target = { connectionString: options.postgres.url, ...(options.postgres.schema === undefined ? {} : { schema: options.postgres.schema }) };
    const report = await migratePostgres(target);
    const { langgraphVersion } = await migrateLangGraphPostgres(target);
    process.stdout.write(
      `${JSON.stringify({ migrated: report.schema, recall_version: report.recallVersion, langgraph_version: langgraphVersion, vectors: report.vectors, ms: Math.round(performance.now() - started) })}\n`,
    );
    return 0;
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown };
    process.stderr.write(`mnemo: ${typeof e.code === 'string' ? `${e.code}: ` : ''}${String(e.message ?? error)}\n`);
    return 1;
  }
}
