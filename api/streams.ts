import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import type { Gauge } from 'prom-client';
import { config } from '../shared/config.js';

/** Long-lived responses (SSE) of this process, so shutdown can end them before the server closes. */
const open = new Set<() => void>();

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
 * The lifetime of one SSE response: keep-alive comments every SESSION_SSE_KEEPALIVE_SECONDS, a gauge
 * of open streams, ended by shutdown (trackStream), and one cleanup however it ends: by the client
 * (close), gracefully (end), or dropped for not keeping up (drop).
 */
export class SseLifetime {
  #ended = false;
  readonly #cleanups: Array<() => void> = [];

  constructor(private readonly res: ServerResponse, gauge: Gauge) {
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
