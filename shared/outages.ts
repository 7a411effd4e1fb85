/**
 * Outages of the platform's dependencies (Redis, PostgreSQL) as the process sees them: one log line
 * when one starts and one when it ends, however many connections and requests fail in between, and
 * the recognition of the errors that mean "dependency unavailable" (answered 503, not 500).
 */
import { logger } from './logger.js';

export type Dependency = 'redis' | 'postgres';

/** A failure this long after the previous one belongs to the same outage. */
const sameOutageMs = 10_000;

const state = new Map<Dependency, { since: number; lastError: number }>();

/** Records a failure of a dependency; logs only the first of an outage. */
export function dependencyFailed(dep: Dependency, err: unknown): void {
  const now = Date.now();
  const current = state.get(dep);
  if (current && now - current.lastError < sameOutageMs) {
    current.lastError = now;
    return;
  }
  state.set(dep, { since: now, lastError: now });
  logger('outages').error({ dependency: dep, err: errorMessage(err) }, `${dep} unavailable: answering 503 until it is back`);
}

/** Whether some dependency failed within the last few seconds (an outage may be under way). */
export function outageInProgress(now = Date.now()): boolean {
  for (const s of state.values()) if (now - s.lastError < sameOutageMs) return true;
  return false;
}

/** Whether `dep` is in an outage as this process sees it (failed recently, not yet recovered). */
export function dependencyInOutage(dep: Dependency, now = Date.now()): boolean {
  const s = state.get(dep);
  return s !== undefined && now - s.lastError < sameOutageMs;
}

/** Records that a dependency answers again; logs the end of an outage once. */
export function dependencyRecovered(dep: Dependency): void {
  const current = state.get(dep);
  if (!current) return;
  state.delete(dep);
  logger('outages').warn({ dependency: dep, outage_ms: Date.now() - current.since }, `${dep} is back`);
}

/** Reports an error event of a Redis connection (ioredis or BullMQ) as part of a Redis outage. */
export function reportRedisError(_connection: string, err: unknown): void {
  dependencyFailed('redis', err);
}

/** The first line of an error's message (some carry a stack trace in it). */
function errorMessage(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}

const postgresCodes = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down)
  '57014', // query_canceled (statement_timeout)
  '08000', '08001', '08003', '08004', '08006', // connection exceptions
  '53300', // too_many_connections
]);
const socketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTCONN']);

/**
 * The dependency whose unavailability `err` reports, or undefined for any other error: pool
 * acquire and connect timeouts, refused or reset connections, a server shutting down, a statement
 * or Redis command timed out, a Redis command refused while the connection is down, no sentinel
 * naming a reachable master, a former master refusing writes while a failover completes.
 */
export function unavailableDependency(err: unknown): Dependency | undefined {
  const e = err as { name?: string; code?: string; message?: string; constructor?: { name?: string } } | undefined;
  if (!e || typeof e !== 'object') return undefined;
  const message = e.message ?? '';
  const name = e.name ?? e.constructor?.name ?? '';
  if (name === 'MaxRetriesPerRequestError' || /^Connection is closed|Stream isn't writeable|Command timed out|Reached the max retries per request|^All sentinels are unreachable|^READONLY/.test(message)) return 'redis';
  if (name === 'KnexTimeoutError' || /Knex: Timeout acquiring a connection|timeout exceeded when trying to connect|Connection terminated|Query read timeout|Client has encountered a connection error|^timeout expired$|Connection terminated unexpectedly/.test(message)) return 'postgres';
  if (e.code && postgresCodes.has(e.code)) return 'postgres';
  // Redis' own socket errors reach requests as the messages above; a raw one comes from pg.
  if (e.code && socketCodes.has(e.code)) return 'postgres';
  return undefined;
}
