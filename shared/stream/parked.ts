/**
 * Parked sessions: a session whose write failed in its lane has its events held, in acceptance
 * order, in a Redis list of its own; a stream.drain-parked job writes them from the head, and the
 * session is parked exactly as long as that list is not empty. A lane job checks and appends in one
 * script, and the drain removes an event only once it is written, so an event never overtakes
 * another of its session and none is left behind when the list empties.
 */
import type { Redis } from 'ioredis';
import client from 'prom-client';
import { config } from '../config.js';
import { logger } from '../logger.js';
import { metricsRegistry, metricPrefix } from '../metrics.js';
import { enqueue } from '../queues.js';
import { commandRedis } from '../redis.js';
import { eventIdOf, type StreamEvent } from './stream.schemas.js';

const parkedSessions = new client.Counter({
  name: `${metricPrefix}stream_sessions_parked_total`,
  help: 'Sessions set apart from their lane because a write of theirs failed (their events wait in order on their own)',
  registers: [metricsRegistry],
});

/** The list of a session's parked events (JSON, oldest first). */
const parkedKey = (sessionId: string) => `${config().queues.prefix}:stream:parked:${sessionId}`;

/** Appends to the list only when it is not empty (the session is parked); returns the head's JSON, else nil. */
const holdScript = `if redis.call('LLEN', KEYS[1]) == 0 then return false end
redis.call('RPUSH', KEYS[1], unpack(ARGV))
return redis.call('LINDEX', KEYS[1], 0)`;
/** Appends to the list; returns the head's JSON. */
const parkScript = `redis.call('RPUSH', KEYS[1], unpack(ARGV))
return redis.call('LINDEX', KEYS[1], 0)`;
/** Removes the head if it is still ARGV[1]; returns how many are left. */
const popScript = `if redis.call('LINDEX', KEYS[1], 0) == ARGV[1] then redis.call('LPOP', KEYS[1]) end
return redis.call('LLEN', KEYS[1])`;

interface ParkedCommands {
  streamHold(key: string, ...events: string[]): Promise<string | null>;
  streamPark(key: string, ...events: string[]): Promise<string>;
  streamPop(key: string, head: string): Promise<number>;
}

let scripted: (Redis & ParkedCommands) | undefined;
function redis(): Redis & ParkedCommands {
  const conn = commandRedis('stream');
  if (scripted !== conn) {
    conn.defineCommand('streamHold', { numberOfKeys: 1, lua: holdScript });
    conn.defineCommand('streamPark', { numberOfKeys: 1, lua: parkScript });
    conn.defineCommand('streamPop', { numberOfKeys: 1, lua: popScript });
    scripted = conn as Redis & ParkedCommands;
  }
  return scripted;
}

/** Makes sure a drain job runs for the parked session whose head event is `headJson` (one job per head). */
async function drainFrom(sessionId: string, headJson: string): Promise<void> {
  const head = JSON.parse(headJson) as StreamEvent;
  await enqueue('stream.drain-parked', { session_id: sessionId, parked_by: eventIdOf(head) });
}

/**
 * Whether any of these sessions is parked, in one command. Only a lane job parks a session of its
 * lane, so a session not parked now stays so while the lane job runs.
 */
export async function anyParked(sessionIds: readonly string[]): Promise<boolean> {
  return sessionIds.length > 0 && (await redis().exists(...sessionIds.map(parkedKey))) > 0;
}

/**
 * When the session is parked, appends the events behind its parked ones and returns true; else
 * returns false and the caller writes them. The drain job is asked for again (a no-op while it
 * exists), so a drain lost with a failed enqueue is made good by the session's next event.
 */
export async function holdIfParked(sessionId: string, events: StreamEvent[]): Promise<boolean> {
  const head = await redis().streamHold(parkedKey(sessionId), ...events.map((e) => JSON.stringify(e)));
  if (head === null) return false;
  await drainFrom(sessionId, head);
  return true;
}

/** Parks a session with `events` (the one that failed first) and starts the drain of its parked events. */
export async function park(sessionId: string, events: StreamEvent[], reason: unknown): Promise<void> {
  const head = await redis().streamPark(parkedKey(sessionId), ...events.map((e) => JSON.stringify(e)));
  parkedSessions.inc();
  logger('stream').warn({ session_id: sessionId, events: events.length, err: (reason as Error)?.message ?? String(reason) }, 'session parked: its events wait, in order, for their own retries');
  await drainFrom(sessionId, head);
}

/** The oldest parked event of a session (its JSON), or null when the session is not parked. */
export function parkedHead(sessionId: string): Promise<string | null> {
  return redis().lindex(parkedKey(sessionId), 0);
}

/** Removes the head `headJson` once written (or set aside); returns how many events are still parked. */
export function removeParkedHead(sessionId: string, headJson: string): Promise<number> {
  return redis().streamPop(parkedKey(sessionId), headJson);
}

/** Starts a drain for what is still parked after a head was set aside. */
export async function drainRest(sessionId: string): Promise<void> {
  const head = await parkedHead(sessionId);
  if (head !== null) await drainFrom(sessionId, head);
}
