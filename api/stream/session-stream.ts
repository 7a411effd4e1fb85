/**
 * The SSE stream of a session. Each event is written as `id: <sequence>` and one `data:` line with
 * the envelope {event_type, session_id, channel, data}; events of the subscriber's own channel are
 * skipped. A client resuming with Last-Event-ID first gets what it missed from Postgres, then the
 * live events; live events arriving during the replay are held and deduplicated by sequence, so
 * there is neither gap nor duplicate. A client that cannot keep up is disconnected (it reconnects
 * and replays) instead of being buffered without bound.
 */
import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import client from 'prom-client';
import { leaveSession, offBusReconnect, onBusReconnect, subscribeSession, type BusEvent, type BusSubscriber } from '../../shared/bus.js';
import { logger } from '../../shared/logger.js';
import { closedSessionConflict } from '../../shared/sessions/sessions.store.js';
import { streamEventsAfter, streamHead } from '../../shared/stream/stream.store.js';
import { ValidationError } from '../../shared/errors.js';
import { metricsRegistry, metricPrefix } from '../../shared/metrics.js';
import { SseLifetime, startSseResponse, streamCaller } from './sse.js';
import { isFinalEvent, primePublishable } from '../../shared/stream/index.js';
import { holdSlot } from '../../shared/limits.js';

/** Bytes a subscriber may have unsent before it is cut off. */
export const slowSubscriberBytes = 1024 * 1024;
/** Live events held while a replay runs; more means the client is too far behind: cut off. */
const maxHeldEvents = 10_000;
const replayPage = 500;

const openStreams = new client.Gauge({ name: `${metricPrefix}session_sse_streams`, help: 'Open session SSE streams in this process', registers: [metricsRegistry] });
const slowDisconnects = new client.Counter({ name: `${metricPrefix}session_sse_slow_disconnects_total`, help: 'SSE subscribers cut off for not keeping up', registers: [metricsRegistry] });

const frames = new WeakMap<BusEvent, string>();

/** The SSE frame of an event (the envelope without stream bookkeeping), built once per event for all its subscribers. */
export function sseFrame(event: BusEvent): string {
  let frame = frames.get(event);
  if (frame === undefined) {
    const envelope = { event_type: event.event_type, session_id: event.session_id, channel: event.channel, data: event.data };
    frame = `id: ${event.sequence}\ndata: ${JSON.stringify(envelope)}\n\n`;
    frames.set(event, frame);
  }
  return frame;
}

/**
 * GET …/events of a session (the session API's and the portal chat's): the resume point from the
 * Last-Event-ID header or the `last_event_id` query, then the stream. A closed session streams only
 * a replay that ends with its final event; with nothing left to replay it is a 409, which (unlike a
 * 200 that ends at once) stops an EventSource from reconnecting for ever. Each stream holds one of
 * its person's LIMIT_STREAMS_PER_PERSON slots, whoever opened it (the person, or an API key).
 */
export async function serveSessionStream(
  ctx: Context,
  session: { session_id: string; user_id: string; status: string },
  channel: string,
  headerId: string | undefined,
  queryId: number | undefined,
): Promise<void> {
  const lastEventId = headerId !== undefined ? Number(headerId) : queryId;
  const closed = session.status === 'closed';
  if (closed && (lastEventId === undefined || !(await streamEventsAfter(session.session_id, lastEventId, 1)).length)) throw closedSessionConflict(session.session_id);
  if (lastEventId !== undefined && !Number.isSafeInteger(lastEventId)) throw new ValidationError('Last-Event-ID is out of range.', [{ path: 'headers.last-event-id', message: 'must be a sequence number' }]);
  // Counted for the session's person over every API process: a key serves many people, so a cap of
  // its own would only repeat SSE_MAX_STREAMS_PER_KEY; the slot goes back when the response closes.
  const release = await holdSlot('streams', session.user_id);
  ctx.res.once('close', () => void release());
  // Its channel will publish next: the session check of those messages is then answered from the cache.
  if (!closed) primePublishable(session.session_id).catch(() => undefined);
  await streamSession(ctx, session.session_id, channel, lastEventId, closed);
}

/**
 * Takes over the response of `ctx` and streams the session's events to it until either side ends.
 * Sequences of a session are contiguous, so a live event beyond the next one means the bus lost
 * some (Redis restarted, a publish failed): the stream fills the gap from Postgres before going on,
 * and does the same whenever the bus connection comes back. Either way the client misses nothing.
 */
export async function streamSession(ctx: Context, sessionId: string, channel: string, lastEventId: number | undefined, closed = false): Promise<void> {
  const res = ctx.res;
  // A live-only stream starts at the session's head, read before subscribing: anything after it is
  // delivered live or filled; nothing before it is replayed.
  const last = lastEventId ?? (await streamHead(sessionId));
  const stream = new SessionStream(res, streamCaller(ctx), sessionId, channel, last, String(ctx.state.requestId ?? ''));
  // Left when the stream ends (SessionStream.ending), also if it ends while this waits.
  await subscribeSession(sessionId, stream);
  if (!stream.ended) onBusReconnect(stream);
  // Answered meanwhile (a 503 during an outage, see outageDeadline): nothing to stream to.
  if (res.headersSent) {
    stream.end();
    return;
  }

  startSseResponse(ctx);
  // The reconnection delay suggested by the spec (clients double it up to 30 s themselves).
  res.write('retry: 1000\n\n');
  await stream.refill();
  // A closed session's replay is all there is.
  if (closed) stream.end();
}

/**
 * One session stream: its lifetime, and the bus listener and reconnect hook it registers as itself.
 * State lives in fields and behaviour in methods, not in closures over the request: an idle stream
 * holds this object, its response and socket, and nothing of Koa's context.
 */
class SessionStream extends SseLifetime implements BusSubscriber {
  /**
   * Events held until the headers are out (and while a fill runs), else null: one arriving earlier
   * would otherwise be written with Koa's default status, or ahead of the events the fill brings.
   */
  #held: BusEvent[] | null = [];
  #filling: Promise<void> = Promise.resolve();

  constructor(
    res: ServerResponse,
    caller: string,
    private readonly sessionId: string,
    private readonly channel: string,
    /** The sequence of the last event written (or skipped): the resume point. */
    private last: number,
    private readonly requestId: string,
  ) {
    super(res, openStreams, caller);
  }

  /** A live event from the bus. */
  onMessage(event: BusEvent): void {
    if (this.#held) {
      this.#held.push(event);
      if (this.#held.length > maxHeldEvents) this.end();
    } else if (event.sequence > this.last + 1) {
      this.#held = [event];
      void this.refill();
    } else this.#write(event);
  }

  /** The bus subscriber is back after a loss: fill what was published meanwhile. */
  onBusReconnect(): void {
    void this.refill();
  }

  /** Queues a fill after the one running, if any. */
  refill(): Promise<void> {
    return (this.#filling = this.#filling.then(() => this.#fill()));
  }

  protected override ending(): void {
    leaveSession(this.sessionId, this);
    offBusReconnect(this);
  }

  #write(event: BusEvent): void {
    if (this.ended || event.sequence <= this.last) return;
    this.last = event.sequence;
    const res = this.res;
    // The session's final event ends the stream (also for a subscriber of its channel, which gets no frame).
    if (isFinalEvent(event)) {
      // Its own channel gets only the id (an SSE block without data moves Last-Event-ID, dispatches nothing).
      res.write(event.channel !== this.channel ? sseFrame(event) : `id: ${event.sequence}\n\n`);
      this.end();
      return;
    }
    if (event.channel === this.channel) return;
    res.write(sseFrame(event));
    if (res.writableLength > slowSubscriberBytes) {
      slowDisconnects.inc();
      this.drop();
    }
  }

  /** Writes what Postgres has after `last`, then the live events held meanwhile (in order, once). */
  async #fill(): Promise<void> {
    if (this.ended) return;
    this.#held ??= [];
    try {
      for (;;) {
        const page = await streamEventsAfter(this.sessionId, this.last, replayPage);
        for (const event of page) this.#write(event);
        if (page.length < replayPage || this.ended) break;
      }
    } catch (err) {
      // Postgres unavailable: end the stream, the client reconnects with its last id and replays.
      logger('http').child({ request_id: this.requestId }).warn({ err: (err as Error).message, session_id: this.sessionId }, 'SSE fill failed; stream ended');
      this.end();
      return;
    }
    const pending = this.#held ?? [];
    this.#held = null;
    for (const event of pending.sort((a, b) => a.sequence - b.sequence)) this.#write(event);
  }
}
