import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { logger } from '../../shared/logger.js';
import { withRequestId } from '../../shared/request-context.js';

const acceptable = /^[\w.-]{1,128}$/;

/**
 * Gives each request an id (the caller's X-Request-Id when sane), echoed on every response; the rest
 * of the request runs with it as its request context, so every log line and enqueued job carries it.
 */
export function requestId(): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const id = acceptable.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = id;
    // The logger's mixin adds request_id from the request context: no child logger per request.
    Object.defineProperty(ctx.state, 'log', { configurable: true, enumerable: true, get: () => logger('http') });
    ctx.set('X-Request-Id', id);
    await withRequestId(id, next);
  };
}
