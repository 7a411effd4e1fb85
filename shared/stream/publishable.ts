/**
 * The session check of every publish (the session exists and is live; the interaction, if any, is
 * one of its own), answered from a bounded per-process cache so a session's messages after its first
 * cost Postgres nothing. What can make an answer stale is a session closing or being erased: every
 * path that does so calls forgetPublishable after its commit, which tells every process over the bus
 * (`sessions:unpublishable`); a process drops its whole cache when its bus connection comes back (it
 * may have missed some), and each entry lives at most STREAM_SESSION_CACHE_MS as a backstop. A
 * session never changes owner and an interaction never moves to another session, so nothing else
 * invalidates. An event that still slips into a session closed meanwhile (however it closed: a row
 * changed by hand, a lost invalidation) is not written by the lane (the append checks the status),
 * which says so on the same channel: every process forgets the session, and the request waiting for
 * that event answers 409 or 404 as the check would have.
 */
import { LRUCache } from 'lru-cache';
import { onBusReconnect, publishMessage, subscribeChannel } from '../bus.js';
import { config } from '../config.js';
import { NotFoundError } from '../errors.js';
import { logger } from '../logger.js';
import { closedSessionConflict } from '../sessions/sessions.store.js';
import { publishableState } from './stream.store.js';

/** The bus channel on which processes hear of sessions that no longer take publishes (JSON array of ids). */
const unpublishableChannel = 'sessions:unpublishable';

/** Most sessions one process remembers (about 200 bytes each with a few interactions). */
const maxSessions = 10_000;

/** What travels on the channel: sessions to forget, and events a lane refused for them. */
interface Unpublishable {
  session_ids: string[];
  refused?: Array<{ id: string; session_id: string; reason: 'closed' | 'gone' }>;
}

let cache: LRUCache<string, Set<string>> | undefined;
/** Requests waiting for their event's publication: told here when a lane refused it instead. */
const waiting = new Map<string, (err: Error) => void>();
/** Bumped by every invalidation: a check that saw it move during its read does not cache what it read. */
let invalidations = 0;
let listening: Promise<boolean> | undefined;

function sessionsCache(): LRUCache<string, Set<string>> | undefined {
  const ttl = config().stream.sessionCacheMs;
  if (ttl <= 0) return undefined;
  cache ??= new LRUCache<string, Set<string>>({ max: maxSessions, ttl });
  return cache;
}

function forget(sessionIds: readonly string[]): void {
  invalidations++;
  for (const id of sessionIds) cache?.delete(id);
}

/** The error the session check would have given for a session that is closed, or gone. */
function refusalError(sessionId: string, reason: 'closed' | 'gone'): Error {
  return reason === 'closed' ? closedSessionConflict(sessionId) : new NotFoundError(`No session ${sessionId}.`);
}

function heard(message: Unpublishable): void {
  forget(Array.isArray(message?.session_ids) ? message.session_ids : []);
  for (const r of message?.refused ?? []) waiting.get(r.id)?.(refusalError(r.session_id, r.reason));
}

/** Subscribes this process to invalidations once; false while the bus is away (then nothing is cached). */
function listen(): Promise<boolean> {
  listening ??= subscribeChannel<Unpublishable>(unpublishableChannel, heard).then(
    () => {
      // Whatever was published while the subscriber was away never arrived: start over.
      onBusReconnect(() => {
        invalidations++;
        cache?.clear();
      });
      return true;
    },
    () => {
      listening = undefined;
      return false;
    },
  );
  return listening;
}

/** Session must exist and be live; the interaction must belong to it. Postgres only on a cache miss. */
export async function assertPublishable(sessionId: string, interactionId: string | null): Promise<void> {
  const known = sessionsCache()?.get(sessionId);
  if (known && (interactionId === null || known.has(interactionId))) return;
  const row = await readAndRemember(sessionId);
  if (!row) throw new NotFoundError(`No session ${sessionId}.`);
  if (row.status === 'closed') throw closedSessionConflict(sessionId);
  if (interactionId && !row.interaction_ids.includes(interactionId)) throw new NotFoundError(`No interaction ${interactionId} in session ${sessionId}.`, [{ path: 'body.interaction_id', message: 'no such interaction in this session' }]);
}

/** Reads a session's state and, when it is live and nothing was invalidated meanwhile, caches it with all its interactions. */
async function readAndRemember(sessionId: string): Promise<Awaited<ReturnType<typeof publishableState>>> {
  const cacheable = sessionsCache() !== undefined && (await listen());
  const seen = invalidations;
  const row = await publishableState(sessionId);
  if (row && row.status !== 'closed' && cacheable && seen === invalidations) cache!.set(sessionId, new Set(row.interaction_ids));
  return row;
}

/**
 * Fills the cache for a session a channel has just opened a stream of: channels stream a session
 * before they publish into it, so their first messages then cost Postgres nothing either (after a
 * restart, every session's first message would otherwise ask at once).
 */
export async function primePublishable(sessionId: string): Promise<void> {
  if (sessionsCache() && !cache!.has(sessionId)) await readAndRemember(sessionId);
}

/**
 * Tells every process that these sessions take no more publishes (closed or erased): call it after
 * the change is committed. Forgotten here at once; a failed publish is logged, the TTL then bounds
 * how long other processes may still accept into them (the lane drops such messages).
 */
export async function forgetPublishable(sessionIds: readonly string[]): Promise<void> {
  if (!sessionIds.length) return;
  forget(sessionIds);
  try {
    await publishMessage(unpublishableChannel, { session_ids: [...sessionIds] } satisfies Unpublishable);
  } catch (err) {
    logger('stream').warn({ err, sessions: sessionIds.length }, 'could not tell other processes of closed sessions; their caches expire within STREAM_SESSION_CACHE_MS');
  }
}

/**
 * Watches for a lane's refusal of an event (its session closed or gone by the time of its write):
 * `refused` rejects with the 409 or 404 the session check gives. Call `stop` when the wait ends.
 * Nothing is watched while this process cannot hear the channel (its cache is then off too).
 */
export function watchRefusal(eventId: string): { refused: Promise<never>; stop: () => void } {
  const refused = new Promise<never>((_, reject) => waiting.set(eventId, reject));
  refused.catch(() => undefined);
  return { refused, stop: () => waiting.delete(eventId) };
}

/** A lane did not write these events, their sessions being closed or gone: tells every process (the lane's side of watchRefusal). */
export async function refuseEvents(refused: NonNullable<Unpublishable['refused']>): Promise<void> {
  if (!refused.length) return;
  await publishMessage(unpublishableChannel, { session_ids: [...new Set(refused.map((r) => r.session_id))], refused } satisfies Unpublishable);
}
