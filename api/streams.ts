import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import type { Gauge } from 'prom-client';
import { config } from '../shared/config.js';
import { TooManyRequestsError } from '../shared/errors.js';

/** Long-lived responses (SSE) of this process, so shutdown can end them before the server closes, and their limits. */
const open = new Set<() => void>();
const admitted = { total: 0, perCaller: new Map<string, number>() };
/** Streams end when their clients leave; a few seconds is a fair guess at when one is free again. */
const retryAfterSeconds = 5;

/** Who holds a stream, for the per-caller cap: the API key's id (never the key), else the signed-in person. */
export function streamCaller(ctx: Context): string {
  const person = ctx.state.person as { subject?: string } | undefined;
  return ctx.state.apiKeyId ?? `person:${person?.subject ?? ''}`;
}

/**
 * Admits one more stream of `caller`, or throws 429 with Retry-After when the process (SSE_MAX_STREAMS)
 * or the caller (SSE_MAX_STREAMS_PER_KEY) is at its cap. Returns the release, safe to call more than once.
 */
export function admitStream(caller: string): () => void {
  const { max, maxPerKey } = config().streams;
  if (admitted.total >= max) throw new TooManyRequestsError(`This server holds its maximum of ${max} streams (SSE_MAX_STREAMS); retry later.`, retryAfterSeconds);
  const held = admitted.perCaller.get(caller) ?? 0;
  if (held >= maxPerKey) throw new TooManyRequestsError(`This API key holds its maximum of ${maxPerKey} open streams (SSE_MAX_STREAMS_PER_KEY); close one or retry later.`, retryAfterSeconds);
  admitted.total += 1;
  admitted.perCaller.set(caller, held + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    admitted.total -= 1;
    const left = (admitted.perCaller.get(caller) ?? 1) - 1;
    if (left > 0) admitted.perCaller.set(caller, left);
    else admitted.perCaller.delete(caller);
  };
}

/** Tracks a stream; returns the function that forgets it (call it when the stream ends on its own). */
export function trackStream(end: () => void): () => void {
  open.add(end);
  return () => open.delete(end);
}

/** Ends every open stream (clients reconnect elsewhere and replay what they missed). */
export function endAllStreams(): void {
  for (const end of [...open]) end();
  open.clear();
}

export function openStreamCount(): number {
  return open.size;
}

/**
 * Takes over the response for an SSE stream: no Koa response, no Nagle delay, no socket timeout,
 * and headers that keep proxies from buffering or compressing it.
 */
export function startSseResponse(ctx: Context): void {
  ctx.respond = false;
  ctx.req.socket.setNoDelay(true);
  ctx.req.socket.setTimeout(0);
  ctx.res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
    'Content-Encoding': 'identity',
    'X-Request-Id': String(ctx.state.requestId ?? ''),
  });
}

/**
 * The lifetime of one SSE response: admitted under the stream caps first (429 with Retry-After over
 * them, before anything is held), keep-alive comments every SESSION_SSE_KEEPALIVE_SECONDS, a gauge of
 * open streams, ended by shutdown (trackStream), and one cleanup however it ends: by the client
 * (close), gracefully (end), or dropped for not keeping up (drop).
 */
export class SseLifetime {
  #ended = false;
  readonly #cleanups: Array<() => void> = [];

  constructor(private readonly res: ServerResponse, gauge: Gauge, caller: string) {
    const release = admitStream(caller);
    this.#cleanups.push(release);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), config().sessions.keepAliveSeconds * 1000);
    gauge.inc();
    const untrack = trackStream(() => this.end());
    this.#cleanups.push(() => clearInterval(keepAlive), untrack, () => gauge.dec());
    res.on('close', () => this.#finish());
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Runs `fn` when the stream ends (at once when it already has): e.g. leaving the bus. */
  onEnd(fn: () => void): void {
    if (this.#ended) fn();
    else this.#cleanups.push(fn);
  }

  end(): void {
    if (this.#finish()) this.res.end();
  }

  /** Drops the connection (not a graceful end), which frees what is buffered for it at once. */
  drop(): void {
    if (this.#finish()) this.res.destroy();
  }

  #finish(): boolean {
    if (this.#ended) return false;
    this.#ended = true;
    for (const fn of this.#cleanups) fn();
    return true;
  }
}
