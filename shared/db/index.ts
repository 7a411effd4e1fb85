/** The knex instance of this process and the migration runner. */
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { config } from '../config.js';
import { dependencyFailed, dependencyRecovered, unavailableDependency } from '../outages.js';
import { logger } from '../logger.js';

// Return bigint counts and numerics as JS numbers where they are safe; timestamps stay Date objects.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

export type Db = Knex;

const here = path.dirname(fileURLToPath(import.meta.url));
/** migrations/ beside api/ and workers/, both in source and in dist/. */
export const migrationsDir = path.resolve(here, '../../migrations');

/** Limits of database waits (config DATABASE_*_TIMEOUT_MS); absent ones are not bounded. */
export interface DbTimeouts {
  connectMs?: number;
  acquireMs?: number;
  statementMs?: number;
  /** Client-side wait for a query's answer: the only bound that holds when the server is frozen. */
  queryMs?: number;
  /** Longest a statement waits for a row or table lock held by another transaction. */
  lockMs?: number;
}

/**
 * Knex options for a connection string; migrations load .ts under tsx and .js when compiled.
 * With timeouts, a PostgreSQL that is down or frozen fails a query within them (the API answers
 * 503) instead of holding it for knex's 60 s acquire wait or forever.
 */
export function knexOptions(url: string, poolMax = 10, limits: DbTimeouts | number = {}, poolMin = 0): Knex.Config {
  // A number is the statement timeout alone (callers that bound nothing else).
  const timeouts: DbTimeouts = typeof limits === 'number' ? { statementMs: limits } : limits;
  return {
    client: 'pg',
    connection: {
      connectionString: url,
      ...(timeouts.connectMs ? { connectionTimeoutMillis: timeouts.connectMs } : {}),
      ...(timeouts.statementMs ? { statement_timeout: timeouts.statementMs } : {}),
      ...(timeouts.queryMs ? { query_timeout: timeouts.queryMs } : {}),
      ...(timeouts.lockMs ? { lock_timeout: timeouts.lockMs } : {}),
    },
    ...(timeouts.acquireMs ? { acquireConnectionTimeout: timeouts.acquireMs } : {}),
    // knex prints pool errors to the console with a stack each; an outage is reported once instead.
    log: {
      warn: (message: unknown) => reportDbLog('warn', message),
      error: (message: unknown) => reportDbLog('error', message),
      debug: () => undefined,
      deprecate: (method: string, alternative: string) => logger('db').warn({ method, alternative }, 'knex deprecation'),
    },
    // A new connection means PostgreSQL answers again: the end of an outage is logged once.
    pool: { min: poolMin, max: poolMax, afterCreate: (conn: unknown, done: (err: Error | null, conn: unknown) => void) => (dependencyRecovered('postgres'), done(null, conn)) },
    migrations: { tableName: 'knex_migrations', migrationSource: new MigrationFiles() },
  };
}

const extension = path.extname(fileURLToPath(import.meta.url)); // .ts under tsx/vitest, .js when compiled

/**
 * Migrations imported by this module rather than by knex, so they load wherever this module does
 * (tsx, vitest's transformer, compiled JavaScript).
 */
class MigrationFiles implements Knex.MigrationSource<string> {
  async getMigrations(): Promise<string[]> {
    return readdirSync(migrationsDir)
      .filter((f) => f.endsWith(extension) && !f.endsWith('.d.ts'))
      .sort();
  }
  getMigrationName(file: string): string {
    return file.replace(/\.(ts|js)$/, '');
  }
  async getMigration(file: string): Promise<Knex.Migration> {
    return import(pathToFileURL(path.join(migrationsDir, file)).href);
  }
}

function reportDbLog(level: 'warn' | 'error', message: unknown): void {
  const err = message instanceof Error ? message : new Error(String(message));
  const text = String((message as Error)?.message ?? message);
  if (unavailableDependency(err) || /Acquire connection error|timeout expired|ECONNREFUSED|Connection terminated|Connection ended unexpectedly/.test(text)) dependencyFailed('postgres', err);
  else logger('db')[level]({ err: text }, 'knex');
}

let instance: Knex | undefined;
let queryTimeoutMs = 0;

/**
 * Bounds every query of this process to the web role's limit (API_QUERY_TIMEOUT_MS), so a request
 * never waits on a frozen PostgreSQL for longer. Call before the first db(); workers do not: their
 * jobs may wait for the database (their locks are kept meanwhile).
 */
export function boundQueriesForRequests(ms: number): void {
  queryTimeoutMs = ms;
}

/** The process-wide knex instance. */
export function db(): Knex {
  if (!instance) {
    const c = config().db;
    instance = knexFactory(knexOptions(c.url, c.poolMax, { connectMs: c.connectTimeoutMs, acquireMs: c.acquireTimeoutMs, statementMs: c.statementTimeoutMs, queryMs: queryTimeoutMs }, c.poolMin));
  }
  return instance;
}

/** Closes the pool (shutdown and tests). */
export async function closeDb(): Promise<void> {
  const k = instance;
  instance = undefined;
  await k?.destroy();
}

/** Applies every pending migration; returns the names applied. */
export async function migrateLatest(k?: Knex): Promise<string[]> {
  // Without a knex of the caller's: a connection of its own, free of the pool's statement timeout
  // (a migration rewriting a large table may rightly take longer).
  const migrator = k ?? knexFactory(knexOptions(config().db.url, 1));
  try {
    const [, applied] = (await migrator.migrate.latest()) as [number, string[]];
    return applied;
  } finally {
    if (!k) await migrator.destroy();
  }
}

/** Pending migration names (empty when the schema is current). */
export async function pendingMigrations(k: Knex = db()): Promise<string[]> {
  const [, pending] = (await k.migrate.list()) as [unknown, Array<{ file: string } | string>];
  return pending.map((p) => (typeof p === 'string' ? p : p.file));
}

/** True when a knex/pg error is a unique violation (optionally of a named constraint). */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e?.code === '23505' && (!constraint || e.constraint === constraint);
}

/** The pool side of a knex client (or of a transaction's, which hands out its own connection). */
interface PooledClient {
  acquireConnection(): Promise<pg.ClientBase>;
  releaseConnection(connection: pg.ClientBase): Promise<unknown>;
}

/**
 * A named prepared statement for a hot path: Postgres parses and plans it once per connection, and
 * the call skips knex's query building (it runs on a connection of the knex pool, or on the
 * transaction's when given one). The text uses $1…$n placeholders. bench:sessions: the message
 * append went from 0.94 to 0.46 ms of Postgres CPU prepared; knex's raw() building cost the API
 * about 0.15 ms per query.
 */
export function preparedStatement<Row extends object>(name: string, text: string) {
  return async (values: unknown[], k: Knex = db()): Promise<Row[]> => {
    const client = k.client as PooledClient;
    const connection = await client.acquireConnection();
    try {
      return (await connection.query<Row>({ name, text, values })).rows;
    } finally {
      await client.releaseConnection(connection);
    }
  };
}

/** An ILIKE pattern matching `text` anywhere, with LIKE's wildcards in it taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
