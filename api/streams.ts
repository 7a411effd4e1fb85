import type { Context } from 'koa';

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
