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
import { subscribeSession, type BusEvent } from '../../shared/bus.js';
import { streamEventsAfter } from '../../shared/sessions/events.store.js';
import { metricsRegistry } from '../../shared/metrics.js';
import { SseLifetime, startSseResponse, streamCaller } from '../streams.js';

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

/** Takes over the response of `ctx` and streams the session's events to it until either side ends. */
export async function streamSession(ctx: Context, sessionId: string, channel: string, lastEventId: number | undefined): Promise<void> {
  const res = ctx.res;
  let last = lastEventId ?? 0;
  // Events are held until the headers are out (and any replay is done): one arriving earlier
  // would otherwise be written with Koa's default status.
  let held: BusEvent[] | null = [];
  const stream = new SseLifetime(res, openStreams, streamCaller(ctx));
  const end = () => stream.end();
  const write = (event: BusEvent) => {
    if (stream.ended || event.sequence <= last) return;
    last = event.sequence;
    if (event.channel === channel) return;
    res.write(sseFrame(event));
    if (res.writableLength > slowSubscriberBytes) {
      slowDisconnects.inc();
      stream.drop();
    }
  };
  const onEvent = (event: BusEvent) => {
    if (held) {
      held.push(event);
      if (held.length > maxHeldEvents) end();
    } else write(event);
  };

  stream.onEnd(await subscribeSession(sessionId, onEvent));

  startSseResponse(ctx);
  // The reconnection delay suggested by the spec (clients double it up to 30 s themselves).
  res.write('retry: 1000\n\n');

  if (lastEventId !== undefined) {
    try {
      for (;;) {
        const page = await streamEventsAfter(sessionId, last, replayPage);
        for (const event of page) write(event);
        if (page.length < replayPage || stream.ended) break;
      }
    } catch (err) {
      ctx.state.log?.error({ err, session_id: sessionId }, 'SSE replay failed');
      end();
      return;
    }
  }
  const pending = held ?? [];
  held = null;
  for (const event of pending.sort((a, b) => a.sequence - b.sequence)) write(event);
}
