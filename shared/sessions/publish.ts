/**
 * Accepting events into a session's stream (the API and workers both publish through here):
 * validate against the database, give the event its id, enqueue it into the session's lane, and
 * optionally wait a bounded time until a worker has persisted and broadcast it.
 */
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { NotFoundError } from '../errors.js';
import { messageRefused, subscribeSession, type BusEvent } from '../bus.js';
import { closedSessionConflict, liveSessionInteractions, publishableState } from './sessions.store.js';
import { persistedSequence } from './messages.store.js';
import { firstForKey, releaseKey } from './idempotency.js';
import { deliverSettled, enqueueDeliver } from './lanes.js';
import type { ClientEvent, DeliverJob, EventType, HistoryMessage, MessageInput, Channel, eventAcceptedSchema, publishResponse } from './schemas.js';
import type { z } from '../zod.js';

/** What accepting a message reports: the PublishResult fields, and whether an Idempotency-Key repeated an earlier request (the first message is reported). */
export type Publication = Omit<z.output<typeof publishResponse>, 'success'> & { replayed: boolean };

export interface AcceptOptions {
  /** A client's Idempotency-Key: a repeat within 24 hours reports the first message instead of adding one. */
  idempotencyKey?: string;
  /** How long to wait for persist + publish (0: return once enqueued). */
  waitMs?: number;
}

/** Session must exist and be live; the interaction must belong to it. One round trip. */
async function assertPublishable(sessionId: string, interactionId: string | null): Promise<void> {
  const row = await publishableState(sessionId, interactionId);
  if (!row) throw new NotFoundError(`No session ${sessionId}.`);
  if (row.status === 'closed') throw closedSessionConflict(sessionId);
  if (interactionId && !row.interaction_ok) throw new NotFoundError(`No interaction ${interactionId} in session ${sessionId}.`, [{ path: 'body.interaction_id', message: 'no such interaction in this session' }]);
}

/**
 * Sessions a message was recently accepted into, with the interactions found to belong to them, so
 * the next message of a session is accepted without asking Postgres. An interaction never moves to
 * another session; a session may close meanwhile (elsewhere, or by expiry): the worker refuses a
 * message of a closed or deleted session and says so on the bus (deliver.ts), and the waiting
 * request answers 409/404 as the database check would have and forgets the session here. A close
 * in this process forgets it at once (publishSessionClosed).
 */
const publishable = new LRUCache<string, Set<string>>({ max: 10_000, ttl: 60_000 });

/** assertPublishable, answered from `publishable` when the session (and interaction) are known there. */
async function assertMessagePublishable(sessionId: string, interactionId: string | null): Promise<void> {
  const known = publishable.get(sessionId);
  if (known && (interactionId === null || known.has(interactionId))) return;
  await assertPublishable(sessionId, interactionId);
  const interactions = known ?? new Set<string>();
  if (interactionId) interactions.add(interactionId);
  publishable.set(sessionId, interactions);
}

/**
 * Fills `publishable` for a session a channel has just subscribed to, with its interactions: a
 * channel streams a session before it publishes into it, so its first message is then accepted
 * without asking Postgres too. Measured: after a restart, the first message of each of 250 sessions
 * asked Postgres within the same second, most of the first 10 s tail of bench:sessions.
 */
export async function primePublishable(sessionId: string): Promise<void> {
  const interactions = await liveSessionInteractions(sessionId);
  if (!interactions) return;
  const known = publishable.get(sessionId) ?? new Set<string>();
  for (const id of interactions) known.add(id);
  publishable.set(sessionId, known);
}

/** The error the database check would have given for a message the worker refused (see messageRefused). */
function refusal(sessionId: string, event: BusEvent): Error {
  publishable.delete(sessionId);
  return event.data.reason === 'closed' ? closedSessionConflict(sessionId) : new NotFoundError(`No session ${sessionId}.`);
}

/**
 * Runs `enqueueIt` while listening on the session's bus channel, and resolves with the first event
 * matching `match` (or undefined after `waitMs`). Subscribing first means the event cannot slip by.
 */
export async function enqueueAndAwait(sessionId: string, match: (e: BusEvent) => boolean, waitMs: number, enqueueIt: () => Promise<unknown>): Promise<BusEvent | undefined> {
  // The wait counts from here: subscribing and enqueueing use it up too, so a slow Redis does not add to it.
  const started = Date.now();
  if (waitMs <= 0) {
    await enqueueIt();
    return undefined;
  }
  let found: (e: BusEvent) => void = () => undefined;
  const arrived = new Promise<BusEvent>((resolve) => (found = resolve));
  const unsubscribe = await subscribeSession(sessionId, (e) => {
    if (match(e)) found(e);
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await enqueueIt();
    const left = Math.max(0, waitMs - (Date.now() - started));
    return await Promise.race([arrived, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), left)))]);
  } finally {
    clearTimeout(timer);
    unsubscribe();
  }
}

const isEvent = (id: string) => (e: BusEvent) => e.id === id;

/**
 * Enqueues events of one session into its lane (lanes.ts), in order, and waits up to `waitMs` for
 * the last one to be published; resolves with it, or undefined (not waited for, or not in time).
 */
async function deliverAndAwait(events: DeliverJob[], waitMs: number): Promise<BusEvent | undefined> {
  const last = events[events.length - 1]!;
  const id = last.kind === 'message' ? last.message_id : last.event_id;
  const awaited = waitMs > 0;
  try {
    return await enqueueAndAwait(last.session_id, isEvent(id), waitMs, () => Promise.all(events.map((e) => enqueueDeliver(e, awaited && e === last))));
  } finally {
    // The lane holds its next group until this wait is over (lanes.ts).
    if (awaited) deliverSettled(id);
  }
}

/**
 * Waits up to `waitMs` for a message to be persisted and published; resolves with its sequence, or
 * null if that did not happen in time.
 */
export async function waitForPublished(sessionId: string, messageId: string, waitMs: number): Promise<number | null> {
  let resolveSeq: (n: number) => void = () => undefined;
  const arrived = new Promise<number>((resolve) => (resolveSeq = resolve));
  const unsubscribe = await subscribeSession(sessionId, (e) => {
    if (isEvent(messageId)(e) && e.event_type !== messageRefused) resolveSeq(e.sequence);
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    // Persisted before we subscribed: the worker publishes right after its commit (or its retry does).
    const already = await persistedSequence(sessionId, messageId);
    if (already !== undefined) return already;
    return await Promise.race([arrived, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), waitMs)))]);
  } finally {
    clearTimeout(timer);
    unsubscribe();
  }
}

/**
 * Accepts a message into a session's stream: checks the session (404 unknown, 409 closed) and the
 * interaction (404), gives the message its id and enqueues it into the session's lane. With
 * `waitMs`, also waits for the worker to persist and broadcast it (message_published, sequence).
 */
export async function acceptMessage(sessionId: string, input: MessageInput, options: AcceptOptions = {}): Promise<Publication> {
  const { idempotencyKey, waitMs: wait = 0 } = options;
  const started = Date.now();
  await assertMessagePublishable(sessionId, input.interaction_id);
  const messageId = randomUUID();
  if (idempotencyKey) {
    const first = await firstForKey(sessionId, idempotencyKey, messageId);
    if (first) {
      const sequence = first.sequence ?? (wait > 0 ? await waitForPublished(sessionId, first.message_id, wait) : await persistedSequence(sessionId, first.message_id) ?? null);
      return { session_id: sessionId, message_id: first.message_id, sequence, message_published: sequence !== null, replayed: true };
    }
  }
  const payload = {
    kind: 'message' as const,
    session_id: sessionId,
    message_id: messageId,
    channel: input.channel,
    role: input.role,
    content: input.content,
    interaction_id: input.interaction_id,
    metadata: input.metadata ?? {},
    idempotency_key: idempotencyKey ?? null,
  };
  // SESSION_PUBLISH_WAIT_MS counts from the request's acceptance, checks included: a slow database does not add to it.
  const event = await deliverAndAwait([payload], wait > 0 ? Math.max(1, wait - (Date.now() - started)) : 0);
  if (event?.event_type === messageRefused) {
    if (idempotencyKey) await releaseKey(sessionId, idempotencyKey);
    throw refusal(sessionId, event);
  }
  return { session_id: sessionId, message_id: messageId, sequence: event?.sequence ?? null, message_published: !!event, replayed: false };
}

/** What accepting a non-message event reports: the EventAccepted fields but `success`. */
export type EventAcceptance = Omit<z.output<typeof eventAcceptedSchema>, 'success' | 'event_type'> & { event_type: EventType };

/**
 * Accepts a non-message event (TYPING, TOOL_CALL, TOOL_RESULT, CONTEXT_UPDATE, and internally
 * CHANNEL_JOINED / CHANNEL_LEFT) into the session's stream. 404 unknown session, 409 closed.
 */
export async function acceptEvent(
  sessionId: string,
  event: ClientEvent | { event_type: 'CHANNEL_JOINED' | 'CHANNEL_LEFT'; channel: Channel; data: Record<string, unknown> },
  options: { interactionId?: string | null; waitMs?: number; allowClosed?: boolean } = {},
): Promise<EventAcceptance> {
  if (!options.allowClosed) await assertPublishable(sessionId, null);
  const eventId = randomUUID();
  const payload = {
    kind: 'event' as const,
    session_id: sessionId,
    event_id: eventId,
    event_type: event.event_type,
    channel: event.channel,
    interaction_id: options.interactionId ?? null,
    data: event.data as Record<string, unknown>,
  };
  const published = await deliverAndAwait([payload], options.waitMs ?? 0);
  return { session_id: sessionId, event_id: eventId, event_type: event.event_type, sequence: published?.sequence ?? null, published: !!published };
}

/**
 * Appends history entries of an interaction (final_history sync) through the session's lane, each
 * with an id derived from the interaction and its index (a repeated sync appends nothing twice).
 * Waits up to `waitMs` for the last one, so a context read afterwards sees them.
 */
export async function appendHistory(
  interaction: { interaction_id: string; session_id: string; channel: Channel },
  entries: HistoryMessage[],
  waitMs: number,
): Promise<void> {
  if (!entries.length) return;
  const payloads = entries.map((entry, i) => ({
    kind: 'message' as const,
    session_id: interaction.session_id,
    message_id: randomUUID(),
    channel: interaction.channel,
    role: entry.role,
    content: entry.content,
    interaction_id: interaction.interaction_id,
    metadata: { source: 'final_history' },
    idempotency_key: `final_history:${interaction.interaction_id}:${i}`,
  }));
  await deliverAndAwait(payloads, waitMs);
}

/** Whether an event is a session's final one: the CONTEXT_UPDATE that reports it closed (streams end after it). */
export const isFinalEvent = (event: { event_type: string; data: Record<string, unknown> }) =>
  event.event_type === 'CONTEXT_UPDATE' && event.data.session_status === 'closed';

/**
 * Publishes a closed session's final event: CONTEXT_UPDATE {session_status: closed, reason}, on the
 * session's last channel (the spec's event kinds are exact, and a close changes the context). Open
 * streams end after it; a subscriber of that same channel gets no frame (a subscriber never
 * receives its own channel's events) but its stream ends too.
 */
export async function publishSessionClosed(sessionId: string, channel: Channel, reason: string): Promise<void> {
  publishable.delete(sessionId);
  await acceptEvent(sessionId, { event_type: 'CONTEXT_UPDATE', channel, data: { session_status: 'closed', reason } } as ClientEvent, { allowClosed: true });
}
