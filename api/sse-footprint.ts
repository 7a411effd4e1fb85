/**
 * What an SSE response stops holding once the stream owns it. An idle stream lives for hours and
 * 10,000 of them share one API process (issue 18), so each object a response keeps from the
 * request that opened it is paid 10,000 times over.
 */
import type { ServerResponse } from 'node:http';
import type { EventEmitter } from 'node:events';
import type Koa from 'koa';
import type { Context } from 'koa';

interface ErrorReporters {
  /** Reports an error the way ctx.onerror does for a response whose headers are sent: to the application's 'error' listeners. */
  report(err: unknown): void;
  /** A socket's 'error' listener that reports the first error only (destroying the socket emits it again), as on-finished did. */
  onSocketError(this: EventEmitter, err: unknown): void;
}

/** Per Koa application, shared by all its streams (no closure per stream). */
const reporters = new WeakMap<Koa, ErrorReporters>();

function errorReporters(app: Koa): ErrorReporters {
  let found = reporters.get(app);
  if (!found) {
    const report = (err: unknown) => {
      if (err == null) return;
      const error = err instanceof Error ? err : new Error(`non-error thrown: ${JSON.stringify(err)}`);
      (error as { headerSent?: boolean }).headerSent = true;
      app.emit('error', error);
    };
    const onSocketError = function (this: EventEmitter, err: unknown) {
      this.removeListener('error', onSocketError);
      report(err);
    };
    found = { report, onSocketError };
    reporters.set(app, found);
  }
  return found;
}

/** ee-first's name for the listeners it adds for on-finished (ee-first 1.1.1, unchanged since 2015). */
const finishWatcherListener = 'onevent';

type Listener = (...args: unknown[]) => void;

/** on-finished's listener of each event on `emitter`, or null unless every event has exactly one. */
function watcherListeners(emitter: EventEmitter, events: string[]): Array<[string, Listener]> | null {
  const found: Array<[string, Listener]> = [];
  for (const event of events) {
    const fns = emitter.listeners(event).filter((fn) => fn.name === finishWatcherListener);
    if (fns.length !== 1) return null;
    found.push([event, fns[0] as Listener]);
  }
  return found;
}

/**
 * Koa watches each response with on-finished, only to report a socket error through ctx.onerror:
 * listeners on the response ('end', 'finish') and its socket ('error', 'close'), and the closures,
 * contexts and arrays behind them (~2 KB a stream per heap snapshot), one of them holding the whole
 * Koa context (request, response, state, router matches, query cache). When Koa's is the only
 * watcher, the stream drops it and its socket gets instead one 'error' listener shared by all
 * streams, which reports the same way. Should on-finished ever look different, only the closure
 * holding the context is swapped for that reporter.
 */
function dropFinishWatcher(ctx: Context): void {
  const res = ctx.res as ServerResponse & { __onFinished?: { queue?: unknown[] | null } };
  const watcher = res.__onFinished;
  if (!watcher?.queue?.length) return;
  const { report, onSocketError } = errorReporters(ctx.app);
  const socket = res.socket;
  const onResponse = watcherListeners(res, ['end', 'finish']);
  const onSocket = socket && watcherListeners(socket, ['error', 'close']);
  if (!onResponse || !onSocket || watcher.queue.length !== 1) {
    watcher.queue[0] = report;
    return;
  }
  for (const [event, fn] of onResponse) res.removeListener(event, fn);
  for (const [event, fn] of onSocket) socket.removeListener(event, fn);
  res.__onFinished = undefined;
  socket.on('error', onSocketError);
}

/** The first byte of the last header block flattened: kept so that no compiler drops the read as unused. */
let flattenedFirstByte = 0;

/**
 * Node keeps the response's header block, built by ~30 string concatenations, as a tree of
 * strings (~1.2 KB a stream); reading a character flattens it in place into one string of its
 * length (~300 B).
 */
function flattenHeaderBlock(res: ServerResponse): void {
  const header = (res as { _header?: unknown })._header;
  if (typeof header === 'string') flattenedFirstByte = header.charCodeAt(0);
}

/**
 * Node keeps the headers set before writeHead (here X-Request-Id) and those merged into them by
 * it as a map of [name, value] arrays in dictionary mode (~0.9 KB a stream), only for getHeader()
 * after they are sent. The map goes back to null, its state before any header was set; getHeader
 * and getHeaders answer nothing after that, and nothing of the stream asks them.
 */
function dropSentHeaderMap(res: ServerResponse): void {
  if (!res.headersSent) return;
  // One symbol of Node's for every response: looked up on the first stream only.
  outHeaders ??= Object.getOwnPropertySymbols(res).find((symbol) => symbol.description === 'kOutHeaders') ?? null;
  if (outHeaders) (res as unknown as Record<symbol, unknown>)[outHeaders] = null;
}
let outHeaders: symbol | null | undefined;

/** Called once the stream has written its headers: releases what the response holds for Koa and Node's header building. */
export function shedRequestState(ctx: Context): void {
  dropFinishWatcher(ctx);
  flattenHeaderBlock(ctx.res);
  dropSentHeaderMap(ctx.res);
}
