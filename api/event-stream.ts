/**
 * A live event stream of the bus as server-sent events (the SRE and CRM streams): every stream of
 * a process shares the process's one bus subscriber (shared/bus.ts); nothing is replayed, a
 * reconnecting view refetches.
 */
import type { Context } from 'koa';
import type { Gauge } from 'prom-client';
import { SseLifetime, startSseResponse, streamCaller } from './stream/sse.js';

/** Bytes a subscriber may have unsent before it is cut off (it reconnects and refetches). */
const slowSubscriberBytes = 1024 * 1024;

export interface BusEvent<T extends string = string> {
  id: string;
  type: T;
}

/** Streams the events `subscribe` delivers (of `types`, or all) to the response until either side ends. */
export async function streamBusEvents<E extends BusEvent>(
  ctx: Context,
  subscribe: (listener: (event: E) => void) => Promise<() => void>,
  types: readonly E['type'][] | undefined,
  openStreams: Gauge,
): Promise<void> {
  const res = ctx.res;
  const wanted = types?.length ? new Set<string>(types) : undefined;
  const stream = new SseLifetime(res, openStreams, streamCaller(ctx));
  // Events arriving before the headers are out wait: written earlier, they would go out under Koa's default status.
  let held: E[] | null = [];
  const write = (event: E) => {
    if (stream.ended || (wanted && !wanted.has(event.type))) return;
    res.write(`id: ${event.id}\ndata: ${JSON.stringify(event)}\n\n`);
    if (res.writableLength > slowSubscriberBytes) stream.drop();
  };
  stream.onEnd(await subscribe((event) => (held ? held.push(event) : write(event))));
  startSseResponse(ctx);
  res.write('retry: 1000\n\n');
  const pending = held;
  held = null;
  for (const event of pending) write(event);
}
