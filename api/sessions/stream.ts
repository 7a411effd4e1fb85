/**
 * The SSE stream of a session. Each event is written as `id: <sequence>` and one `data:` line with
 * the envelope {event_type, session_id, channel, data}; events of the subscriber's own channel are
 * skipped. A client resuming with Last-Event-ID first gets what it missed from Postgres, then the
 * live events; live events arriving during the replay are held and deduplicated by sequence, so
 * there is neither gap nor duplicate. A client that cannot keep up is disconnected (it reconnects
 * and replays) instead of being buffered without bound.
 */
import type { Context } from 'koa';
import client from 'prom-client';
import { onBusReconnect, subscribeSession, type BusEvent } from '../../shared/bus.js';
import { streamEventsAfter } from '../../shared/sessions/events.store.js';
import { closedSessionConflict, streamHead } from '../../shared/sessions/sessions.store.js';
import { ValidationError } from '../../shared/errors.js';
import { metricsRegistry } from '../../shared/metrics.js';
import { SseLifetime, startSseResponse, streamCaller } from '../streams.js';
import { isFinalEvent } from '../../shared/sessions/publish.js';

/** Bytes a subscriber may have unsent before it is cut off. */
export const slowSubscriberBytes = 1024 * 1024;
/** Live events held while a replay runs; more means the client is too far behind: cut off. */
const maxHeldEvents = 10_000;
const replayPage = 500;

const openStreams = new client.Gauge({ name: 'session_sse_streams', help: 'Open session SSE streams in this process', registers: [metricsRegistry] });
const slowDisconnects = new client.Counter({ name: 'session_sse_slow_disconnects_total', help: 'SSE subscribers cut off for not keeping up', registers: [metricsRegistry] });

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
 * 200 that ends at once) stops an EventSource from reconnecting for ever.
 */
export async function serveSessionStream(
  ctx: Context,
  session: { session_id: string; status: string },
  channel: string,
  headerId: string | undefined,
  queryId: number | undefined,
): Promise<void> {
  const lastEventId = headerId !== undefined ? Number(headerId) : queryId;
  const closed = session.status === 'closed';
  if (closed && (lastEventId === undefined || !(await streamEventsAfter(session.session_id, lastEventId, 1)).length)) throw closedSessionConflict(session.session_id);
  if (lastEventId !== undefined && !Number.isSafeInteger(lastEventId)) throw new ValidationError('Last-Event-ID is out of range.', [{ path: 'headers.last-event-id', message: 'must be a sequence number' }]);
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
  let last = lastEventId ?? (await streamHead(sessionId));
  // Events are held until the headers are out (and while a fill runs): one arriving earlier would
  // otherwise be written with Koa's default status, or ahead of the events the fill brings.
  let held: BusEvent[] | null = [];
  let filling: Promise<void> = Promise.resolve();
  const stream = new SseLifetime(res, openStreams, streamCaller(ctx));
  const end = () => stream.end();
  const write = (event: BusEvent) => {
    if (stream.ended || event.sequence <= last) return;
    last = event.sequence;
    // The session's final event ends the stream (also for a subscriber of its channel, which gets no frame).
    if (isFinalEvent(event)) {
      // Its own channel gets only the id (an SSE block without data moves Last-Event-ID, dispatches nothing).
      res.write(event.channel !== channel ? sseFrame(event) : `id: ${event.sequence}\n\n`);
      end();
      return;
    }
    if (event.channel === channel) return;
    res.write(sseFrame(event));
    if (res.writableLength > slowSubscriberBytes) {
      slowDisconnects.inc();
      stream.drop();
    }
  };
  /** Writes what Postgres has after `last`, then the live events held meanwhile (in order, once). */
  const fill = async () => {
    if (stream.ended) return;
    held ??= [];
    try {
      for (;;) {
        const page = await streamEventsAfter(sessionId, last, replayPage);
        for (const event of page) write(event);
        if (page.length < replayPage || stream.ended) break;
      }
    } catch (err) {
      // Postgres unavailable: end the stream, the client reconnects with its last id and replays.
      ctx.state.log?.warn({ err: (err as Error).message, session_id: sessionId }, 'SSE fill failed; stream ended');
      end();
      return;
    }
    const pending = held ?? [];
    held = null;
    for (const event of pending.sort((a, b) => a.sequence - b.sequence)) write(event);
  };
  const refill = () => (filling = filling.then(fill));
  const onEvent = (event: BusEvent) => {
    if (held) {
      held.push(event);
      if (held.length > maxHeldEvents) end();
    } else if (event.sequence > last + 1) {
      held = [event];
      void refill();
    } else write(event);
  };

  stream.onEnd(await subscribeSession(sessionId, onEvent));
  stream.onEnd(onBusReconnect(() => void refill()));
  // Answered meanwhile (a 503 during an outage, see outageDeadline): nothing to stream to.
  if (res.headersSent) {
    end();
    return;
  }

  startSseResponse(ctx);
  // The reconnection delay suggested by the spec (clients double it up to 30 s themselves).
  res.write('retry: 1000\n\n');
  await refill();
  // A closed session's replay is all there is.
  if (closed) end();
}
