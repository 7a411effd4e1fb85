/**
 * What an SSE response stops holding once its stream has it (api/sse-footprint.ts): Koa's
 * on-finished watcher and Node's map of the sent headers go, errors of its socket are still
 * reported to the application.
 */
import { afterEach, describe, expect, it } from 'vitest';
import http, { type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { startSseResponse } from '../../api/streams.js';

const onFinished = createRequire(import.meta.url)('on-finished') as (res: ServerResponse, listener: (err: Error | null) => void) => void;

const servers: http.Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** An app whose only route starts a stream (after `before`), and the response it started once a client reads it. */
async function openStream(before: Koa.Middleware = (_, next) => next()) {
  const app = new Koa();
  const errors: Error[] = [];
  app.on('error', (err: Error) => errors.push(err));
  let response: ServerResponse | undefined;
  app.use(before);
  app.use((ctx) => {
    // As the request-id middleware leaves it: a header set before the stream writes its own.
    ctx.state.requestId = 'req-1';
    ctx.set('X-Request-Id', 'req-1');
    startSseResponse(ctx);
    ctx.res.write('retry: 1000\n\n');
    response = ctx.res;
  });
  const server = http.createServer(app.callback());
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = await new Promise<http.IncomingMessage>((resolve) => http.get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, resolve));
  const first = await new Promise<string>((resolve) => client.once('data', (d: Buffer) => resolve(d.toString())));
  return { res: response!, client, first, errors };
}

const watcherListeners = (res: ServerResponse) =>
  [...['end', 'finish'].flatMap((e) => res.listeners(e)), ...['error', 'close'].flatMap((e) => res.socket!.listeners(e))].filter((fn) => fn.name === 'onevent');

describe('an SSE response once the stream has it', () => {
  it('keeps no on-finished watcher and no header map, sends its headers unchanged, and an error of its socket still reaches the application once', async () => {
    const { res, client, first, errors } = await openStream();
    expect((res as { __onFinished?: unknown }).__onFinished).toBeUndefined();
    expect(watcherListeners(res)).toEqual([]);
    expect(res.getHeaderNames()).toEqual([]);
    expect(client.statusCode).toBe(200);
    expect(client.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(client.headers['x-request-id']).toBe('req-1');
    expect(first).toBe('retry: 1000\n\n');

    // Destroying a socket emits its error again: the application hears it once.
    for (let i = 0; i < 2; i++) res.socket!.emit('error', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    await new Promise((r) => setTimeout(r, 50));
    expect(errors.map((e) => [e.message, (e as { headerSent?: boolean }).headerSent])).toEqual([['read ECONNRESET', true]]);
  });

  it('another watcher of the response keeps hearing its end (only the closure holding the context is swapped)', async () => {
    const ends: Array<Error | null> = [];
    const { res, client } = await openStream((ctx, next) => {
      onFinished(ctx.res, (err) => ends.push(err));
      return next();
    });
    expect(watcherListeners(res)).toHaveLength(4);
    client.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(ends).toHaveLength(1);
  });
});
