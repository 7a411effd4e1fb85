import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import type { Gauge } from 'prom-client';
/**
 * What every SSE response of the API shares (session streams, the SRE event stream): admission under
 * the stream caps, the response taken over from Koa, one keep-alive timer, and one cleanup.
 */
import { config } from '../../shared/config.js';
import { TooManyRequestsError } from '../../shared/errors.js';

/** The stream caps' counts of this process. */
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
  admit(caller);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    release(caller);
  };
}

function admit(caller: string): void {
  const { max, maxPerKey } = config().streams;
  if (admitted.total >= max) throw new TooManyRequestsError(`This server holds its maximum of ${max} streams (SSE_MAX_STREAMS); retry later.`, retryAfterSeconds);
  const held = admitted.perCaller.get(caller) ?? 0;
  if (held >= maxPerKey) throw new TooManyRequestsError(`This API key holds its maximum of ${maxPerKey} open streams (SSE_MAX_STREAMS_PER_KEY); close one or retry later.`, retryAfterSeconds);
  admitted.total += 1;
  admitted.perCaller.set(caller, held + 1);
}

function release(caller: string): void {
  admitted.total -= 1;
  const left = (admitted.perCaller.get(caller) ?? 1) - 1;
  if (left > 0) admitted.perCaller.set(caller, left);
  else admitted.perCaller.delete(caller);
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

/** Open SSE lifetimes of this process: for the one keep-alive timer that serves them all, and so shutdown can end them before the server closes. */
const lifetimes = new Set<SseLifetime>();
/** The lifetime of each open stream's response, for the shared 'close' listener. */
const lifetimeOf = new WeakMap<ServerResponse, SseLifetime>();
let keepAliveTimer: NodeJS.Timeout | undefined;

/**
 * Ends every open stream at shutdown (clients reconnect elsewhere and replay what they missed), each
 * told first to reconnect soon: a `retry:` spread over a second, so thousands of clients do not come
 * back in the same instant.
 */
export function endAllStreams(): void {
  for (const stream of [...lifetimes]) {
    stream.retryIn(250 + Math.floor(Math.random() * 1000));
    stream.end();
  }
}

/**
 * One timer writes the keep-alive comment to every open stream every SESSION_SSE_KEEPALIVE_SECONDS,
 * instead of a timer (and its closure) per stream: 10,000 idle streams cost 10,000 fewer Timeout
 * objects. It runs only while streams are open.
 */
function keepAliveTick(): void {
  for (const stream of lifetimes) stream.keepAlive();
}

/**
 * The lifetime of one SSE response: admitted under the stream caps first (429 with Retry-After over
 * them, before anything is held), keep-alive comments every SESSION_SSE_KEEPALIVE_SECONDS (one timer
 * for all streams), a gauge of open streams, ended by shutdown (endAllStreams), and one cleanup
 * however it ends: by the client (close), gracefully (end), or dropped for not keeping up (drop).
 * Kept small on purpose: an idle stream costs what this object and its response hold.
 */
export class SseLifetime {
  #ended = false;
  /** What callers added with onEnd: none, one function, or several. */
  #onEnd: (() => void) | Array<() => void> | undefined;
  /**
   * One 'close' listener for every stream's response (this is the response), instead of a closure
   * and a once-wrapper per stream; #finish is idempotent, so a plain listener does.
   */
  static readonly #onClose = function (this: ServerResponse): void {
    const lifetime = lifetimeOf.get(this);
    if (lifetime) lifetime.#finish();
  };

  constructor(
    protected readonly res: ServerResponse,
    private readonly gauge: Gauge,
    private readonly caller: string,
  ) {
    admit(caller);
    gauge.inc();
    lifetimes.add(this);
    lifetimeOf.set(res, this);
    keepAliveTimer ??= setInterval(keepAliveTick, config().sessions.keepAliveSeconds * 1000);
    res.on('close', SseLifetime.#onClose);
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Writes the keep-alive comment (only once the headers are out: before that, Koa may still answer). */
  keepAlive(): void {
    if (this.res.headersSent) this.res.write(': keep-alive\n\n');
  }

  /** Tells the client how soon to reconnect once this stream ends (the SSE `retry:` field). */
  retryIn(ms: number): void {
    if (this.res.headersSent && !this.#ended) this.res.write(`retry: ${ms}\n\n`);
  }

  /** Runs `fn` when the stream ends (at once when it already has): e.g. leaving the bus. */
  onEnd(fn: () => void): void {
    if (this.#ended) fn();
    else if (!this.#onEnd) this.#onEnd = fn;
    else if (typeof this.#onEnd === 'function') this.#onEnd = [this.#onEnd, fn];
    else this.#onEnd.push(fn);
  }

  end(): void {
    if (this.#finish()) this.res.end();
  }

  /** Drops the connection (not a graceful end), which frees what is buffered for it at once. */
  drop(): void {
    if (this.#finish()) this.res.destroy();
  }

  /** What a subclass releases when the stream ends (before the onEnd functions run). */
  protected ending(): void {}

  #finish(): boolean {
    if (this.#ended) return false;
    this.#ended = true;
    release(this.caller);
    this.gauge.dec();
    lifetimes.delete(this);
    lifetimeOf.delete(this.res);
    if (!lifetimes.size && keepAliveTimer) {
      clearInterval(keepAliveTimer);
      keepAliveTimer = undefined;
    }
    this.ending();
    const fns = this.#onEnd;
    this.#onEnd = undefined;
    if (typeof fns === 'function') fns();
    else if (fns) for (const fn of fns) fn();
    return true;
  }
}
