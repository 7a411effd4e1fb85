import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { config } from '../../shared/config.js';
import { UnauthorizedError } from '../../shared/errors.js';

/** Constant-time string comparison. */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The API key a request carries: X-API-Key, or Authorization: Bearer. */
export function presentedApiKey(ctx: Context): string | undefined {
  const header = ctx.get('X-API-Key');
  if (header) return header;
  const m = /^Bearer\s+(.+)$/i.exec(ctx.get('Authorization'));
  return m?.[1]?.trim();
}

/** A stable, non-secret id of an API key (for audit rows): the first 16 hex digits of its SHA-256. */
export const apiKeyId = (key: string) => `key:${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;

/** Basic-auth user and password of a request, if any. */
export function basicCredentials(ctx: Context): { user: string; password: string } | undefined {
  const m = /^Basic\s+(.+)$/i.exec(ctx.get('Authorization'));
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const at = decoded.indexOf(':');
  return at < 0 ? undefined : { user: decoded.slice(0, at), password: decoded.slice(at + 1) };
}

/** Service routes: a key from API_KEYS (dev accepts dev-key when none is configured). */
export function requireApiKey(): Middleware {
  return async (ctx, next) => {
    const key = presentedApiKey(ctx);
    if (!key) throw new UnauthorizedError('An API key is required: send it in X-API-Key or Authorization: Bearer.');
    if (!config().auth.apiKeys.some((k) => safeEqual(k, key))) throw new UnauthorizedError('The API key is not valid.');
    await next();
  };
}

/** Operator pages: basic auth with ADMIN_USER / ADMIN_PASSWORD. */
export function requireAdmin(): Middleware {
  return async (ctx, next) => {
    const { user, password } = config().auth.admin;
    const given = basicCredentials(ctx);
    if (!given || !user || !safeEqual(given.user, user) || !safeEqual(given.password, password)) {
      ctx.set('WWW-Authenticate', 'Basic realm="switchboard admin", charset="UTF-8"');
      throw new UnauthorizedError('Admin credentials are required (basic auth).');
    }
    await next();
  };
}
