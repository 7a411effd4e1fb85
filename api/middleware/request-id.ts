import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { logger } from '../../shared/logger.js';

const acceptable = /^[\w.-]{1,128}$/;

/** Gives each request an id (the caller's X-Request-Id when sane), echoed on every response and in logs. */
export function requestId(): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const id = acceptable.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = id;
    ctx.state.log = logger('http').child({ request_id: id });
    ctx.set('X-Request-Id', id);
    await next();
  };
}
