/**
 * Accepting events into a session's stream (the API and workers both publish through here): check
 * the session in Postgres, give each event its id, hand the request's events to the session's lane
 * (enqueue.ts), and optionally wait a bounded time until a worker has persisted and broadcast them.
 */
import { randomUUID } from 'node:crypto';
import { subscribeSession, type BusEvent } from '../bus.js';
import type { Channel, ClientEvent, EventType, HistoryMessage, MessageInput, eventAcceptedSchema, publishResponse } from '../sessions/sessions.schemas.js';
import type { z } from '../zod.js';
import type { LimitTake } from '../limits.js';
import { enqueueOnLane, type Settle } from './enqueue.js';
import { firstForKey, releaseKey } from './idempotency.js';
import { assertPublishable, forgetPublishable, watchRefusal } from './publishable.js';
import { eventIdOf, finalEventData, type StreamEvent } from './stream.schemas.js';
import { persistedSequence } from './stream.store.js';

/** What accepting a message reports: the PublishResult fields, and whether an Idempotency-Key repeated an earlier request (the first message is reported). */
export type Publication = Omit<z.output<typeof publishResponse>, 'success'> & { replayed: boolean };

export interface AcceptOptions {
  /** A client's Idempotency-Key: a repeat within 24 hours reports the first message instead of adding one. */
  idempotencyKey?: string;
  /** How long to wait for persist + publish (0: return once enqueued). */
  waitMs?: number;
  /** Limits the request takes, checked with its lane group's (one round trip per group); over one: 429, nothing enqueued. */
  limits?: readonly LimitTake[];
}

/**
 * Runs `enqueueIt` while listening on the session's bus channel, and resolves with the first event
 * matching `match` (or undefined after `waitMs`, or at once when `enqueueIt` resolves to false:
 * nothing was enqueued). Subscribing first means the event cannot slip by.
 */
export async function enqueueAndAwait(sessionId: string, match: (e: BusEvent) => boolean, waitMs: number, enqueueIt: () => Promise<unknown>, refused?: Promise<never>): Promise<BusEvent | undefined> {
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
    if ((await enqueueIt()) === false) return undefined;
    const left = Math.max(0, waitMs - (Date.now() - started));
    return await Promise.race([arrived, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), left))), ...(refused ? [refused] : [])]);
  } finally {
    clearTimeout(timer);
    unsubscribe();
  }
}

const isEvent = (id: string) => (e: BusEvent) => e.id === id;

/** Per session, the last hand-over to its lane this process started. */
const handingOver = new Map<string, Promise<unknown>>();

/**
 * Runs a session's hand-over to its lane after those this process started before it: the session's
 * requests reach its lane in the order they arrived here, whatever order their checks (which run
 * side by side, started before the wait) finish in. Only the hand-over is ordered; waiting for the
 * add and for publication is not.
 */
function inArrivalOrder<T>(sessionId: string, handOver: () => Promise<T>): Promise<T> {
  const run = (handingOver.get(sessionId) ?? Promise.resolve()).then(handOver, handOver);
  const tail = run.then(() => undefined, () => undefined);
  handingOver.set(sessionId, tail);
  void tail.then(() => {
    if (handingOver.get(sessionId) === tail) handingOver.delete(sessionId);
  });
  return run;
}

/**
 * Accepts events of one session: after `check` (which may refuse, or answer false to enqueue
 * nothing), hands them to the session's lane in arrival order (taking `limits` with their group),
 * and waits up to `waitMs` for the last one to be published; resolves with it, or undefined (not
 * waited for, not in time, or nothing enqueued).
 */
async function deliverAndAwait(events: StreamEvent[], waitMs: number, check: () => Promise<unknown> = async () => true, limits: readonly LimitTake[] = []): Promise<BusEvent | undefined> {
  const last = events[events.length - 1]!;
  let settle: Settle | undefined;
  // A lane that finds the session closed meanwhile (the check may have answered from its cache) says so.
  const refusal = waitMs > 0 ? watchRefusal(eventIdOf(last)) : undefined;
  try {
    return await enqueueAndAwait(last.session_id, isEvent(eventIdOf(last)), waitMs, async () => {
      const checked = check();
      // Settled here too, so a refusal while an earlier hand-over runs is not reported as unhandled.
      checked.catch(() => undefined);
      const handed = await inArrivalOrder(last.session_id, async () => {
        if ((await checked) === false) return undefined;
        // The one place an accepted body goes into the stream: what the lane may not refuse is checked before this.
        return { added: enqueueOnLane(events, { limits, awaited: waitMs > 0 }) };
      });
      if (!handed) return false;
      settle = await handed.added;
      return true;
    }, refusal?.refused);
  } finally {
    refusal?.stop();
    // The lane holds its next group until the callers of this one stop waiting (enqueue.ts).
    settle?.();
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
    if (isEvent(messageId)(e)) resolveSeq(e.sequence);
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
  const { idempotencyKey, waitMs: wait = 0, limits } = options;
  const messageId = randomUUID();
  const message: StreamEvent = {
    kind: 'message',
    session_id: sessionId,
    message_id: messageId,
    channel: input.channel,
    role: input.role,
    content: input.content,
    interaction_id: input.interaction_id,
    metadata: input.metadata ?? {},
    idempotency_key: idempotencyKey ?? null,
  };
  let first: { message_id: string; sequence: number | null } | undefined;
  let claimed = false;
  // SESSION_PUBLISH_WAIT_MS counts from the request's acceptance, checks included: a slow database does not add to it.
  const event = await deliverAndAwait(
    [message],
    wait,
    async () => {
      await assertPublishable(sessionId, input.interaction_id);
      if (idempotencyKey) first = await firstForKey(sessionId, idempotencyKey, messageId);
      claimed = !!idempotencyKey && !first;
      return !first;
    },
    limits,
  ).catch(async (err: unknown) => {
    // Refused (a limit) or not enqueued: the key is free again for the client's retry.
    if (claimed) await releaseKey(sessionId, idempotencyKey!, messageId).catch(() => undefined);
    throw err;
  });
  if (first) {
    const sequence = first.sequence ?? (wait > 0 ? await waitForPublished(sessionId, first.message_id, wait) : await persistedSequence(sessionId, first.message_id) ?? null);
    return { session_id: sessionId, message_id: first.message_id, sequence, message_published: sequence !== null, replayed: true };
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
  options: { interactionId?: string | null; waitMs?: number; allowClosed?: boolean; limits?: readonly LimitTake[] } = {},
): Promise<EventAcceptance> {
  const eventId = randomUUID();
  const accepted: StreamEvent = {
    kind: 'event',
    session_id: sessionId,
    event_id: eventId,
    event_type: event.event_type,
    channel: event.channel,
    interaction_id: options.interactionId ?? null,
    data: event.data as Record<string, unknown>,
  };
  const published = await deliverAndAwait([accepted], options.waitMs ?? 0, async () => options.allowClosed || assertPublishable(sessionId, null), options.limits);
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
  const messages = entries.map((entry, i): StreamEvent => ({
    kind: 'message',
    session_id: interaction.session_id,
    message_id: randomUUID(),
    channel: interaction.channel,
    role: entry.role,
    content: entry.content,
    interaction_id: interaction.interaction_id,
    metadata: { source: 'final_history' },
    idempotency_key: `final_history:${interaction.interaction_id}:${i}`,
  }));
  await deliverAndAwait(messages, waitMs);
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
  await forgetPublishable([sessionId]);
  await acceptEvent(sessionId, { event_type: 'CONTEXT_UPDATE', channel, data: finalEventData(reason) } as ClientEvent, { allowClosed: true });
}

/**
 * Ends the streams of sessions an erasure removed: each session's final event goes through its lane,
 * so it follows every event accepted before it (those the erasure came before are refused there, as
 * their session is gone), at the sequence after the last one the erasure saw while it held the
 * session's row. Resolves once they are on their lanes.
 */
export async function endErasedStreams(sessions: ReadonlyArray<{ session_id: string; last_seq: number; last_channel: string | null }>, reason: string): Promise<void> {
  await forgetPublishable(sessions.map((s) => s.session_id));
  const settles = await Promise.all(
    sessions.map((s) =>
      enqueueOnLane([{ kind: 'erased', session_id: s.session_id, event_id: randomUUID(), channel: s.last_channel ?? 'chat', sequence: s.last_seq + 1, reason }]),
    ),
  );
  for (const settle of settles) settle();
}
