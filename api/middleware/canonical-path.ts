/**
 * One spelling per route. Routes match case-insensitively and with or without a trailing slash, and
 * their auth is attached to the route, so those spellings reach the same checks; what is left is a
 * path whose letters, digits or `-._~` are percent-encoded, or which holds dot or empty
 * segments: such a path can be read differently by a prefix check and by the router, so it is refused.
 */
import type { Middleware } from 'koa';
import { ValidationError } from '../../shared/errors.js';

// %41-%5A, %61-%7A, %30-%39, %2D, %2E, %5F, %7E: characters that never need encoding (RFC 3986 § 2.3).
const encodedUnreserved = /%(?:[46][1-9a-f]|[57][0-9a]|3[0-9]|2[de]|5f|7e)/i;
const oddSegments = /\/\/|\/\.\.?(?:\/|$)/;

export function canonicalPath(): Middleware {
  return async (ctx, next) => {
    const raw = ctx.path;
    if (encodedUnreserved.test(raw) || oddSegments.test(raw)) {
      throw new ValidationError('The path is not in canonical form (percent-encoded letters, digits or -._~, dot or empty segments).', [{ path: 'path', message: 'not canonical' }]);
    }
    await next();
  };
}
