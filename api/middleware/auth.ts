import type { Context, Middleware } from 'koa';
import { config } from '../../shared/config.js';
import { ForbiddenError, UnauthorizedError } from '../../shared/errors.js';
import type { Role } from '../../shared/auth/roles.js';
import { browserSession, csrfHeader } from '../auth/browser-session.js';
import { matchDigest, secretDigest, secretsEqual } from '../../shared/secrets.js';

/** The API key a request carries: X-API-Key, or Authorization: Bearer. */
export function presentedApiKey(ctx: Context): string | undefined {
  const header = ctx.get('X-API-Key');
  if (header) return header;
  const m = /^Bearer\s+(.+)$/i.exec(ctx.get('Authorization'));
  return m?.[1]?.trim();
}

/** A stable, non-secret id of an API key (for audit rows): the first 16 hex digits of its SHA-256. */
const idOfDigest = (digest: Buffer) => `key:${digest.toString('hex').slice(0, 16)}`;
export const apiKeyId = (key: string) => idOfDigest(secretDigest(key));

/** Basic-auth user and password of a request, if any. */
export function basicCredentials(ctx: Context): { user: string; password: string } | undefined {
  const m = /^Basic\s+(.+)$/i.exec(ctx.get('Authorization'));
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const at = decoded.indexOf(':');
  return at < 0 ? undefined : { user: decoded.slice(0, at), password: decoded.slice(at + 1) };
}

let keyDigests: { keys: readonly string[]; digests: Buffer[]; ids: string[] } | undefined;

/** Digests of the configured keys (computed once per configuration) and the non-secret id of each (apiKeyId). */
function configuredKeys() {
  const keys = config().auth.apiKeys;
  if (keyDigests?.keys !== keys) {
    const digests = keys.map(secretDigest);
    keyDigests = { keys, digests, ids: digests.map(idOfDigest) };
  }
  return keyDigests;
}

/**
 * Checks an API key against API_KEYS as SHA-256 digests in constant time, so neither a key's content nor
 * its length shows in the timing. The matched key's id (start of its digest, never the key) is left in
 * ctx.state.apiKeyId for per-key limits.
 */
function checkApiKey(ctx: Context, key: string): void {
  const { digests, ids } = configuredKeys();
  const index = matchDigest(key, digests);
  if (index < 0) throw new UnauthorizedError('The API key is not valid.');
  ctx.state.apiKeyId = ids[index];
}

/** Service routes: a key from API_KEYS (dev accepts dev-key when none is configured). */
export function requireApiKey(): Middleware {
  return async (ctx, next) => {
    const key = presentedApiKey(ctx);
    if (!key) throw new UnauthorizedError('An API key is required: send it in X-API-Key or Authorization: Bearer.');
    checkApiKey(ctx, key);
    await next();
  };
}

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * CSRF defence for a cookie-authenticated unsafe request: a cross-site origin is refused outright,
 * and the session's CSRF token must come back in X-CSRF-Token (a cross-site form cannot set headers).
 */
export function checkCsrf(ctx: Context, csrfToken: string): void {
  const site = ctx.get('Sec-Fetch-Site');
  const origin = ctx.get('Origin');
  if (site === 'cross-site' || (origin && origin !== new URL(config().publicUrl).origin)) {
    throw new ForbiddenError('Cross-site requests with the session cookie are refused.');
  }
  const given = ctx.get(csrfHeader);
  if (!given || !secretsEqual(given, csrfToken)) {
    throw new ForbiddenError(`A ${csrfHeader} header with the session's CSRF token (GET /api/global/auth/me) is required for ${ctx.method} requests.`);
  }
}

export interface CallerRule {
  /** Whether an API key is accepted instead of a session. */
  apiKey: boolean;
  /** Role a browser session needs (one of them, when several); undefined: any signed-in person. */
  role?: Role | readonly Role[];
}

/**
 * Routes open to an API key or a browser session: a presented API key is checked as by
 * requireApiKey; otherwise the session cookie must name a live session with the role (403 without
 * it), and unsafe methods must pass the CSRF check. The person is left in ctx.state.person.
 */
export function requireCaller(rule: CallerRule): Middleware {
  return async (ctx, next) => {
    const key = rule.apiKey ? presentedApiKey(ctx) : undefined;
    if (key) {
      checkApiKey(ctx, key);
      return next();
    }
    const session = await browserSession(ctx);
    if (!session) {
      throw new UnauthorizedError(rule.apiKey ? 'Sign in, or send an API key in X-API-Key or Authorization: Bearer.' : 'Sign in first: GET /api/global/auth/login.');
    }
    const needed = rule.role === undefined ? [] : typeof rule.role === 'string' ? [rule.role] : rule.role;
    if (needed.length && !needed.some((r) => session.roles.includes(r))) {
      throw new ForbiddenError(`This needs the ${needed.join(' or ')} role; ${session.name} has ${session.roles.join(', ')}.`);
    }
    if (!safeMethods.has(ctx.method)) checkCsrf(ctx, session.csrf_token);
    ctx.state.person = session;
    await next();
  };
}

/** Operator pages: basic auth with ADMIN_USER / ADMIN_PASSWORD. */
export function requireAdmin(): Middleware {
  return async (ctx, next) => {
    const { user, password } = config().auth.admin;
    const given = basicCredentials(ctx);
    // Both parts are always compared, so the timing does not say which one was wrong.
    const userOk = secretsEqual(given?.user ?? '', user);
    const passwordOk = secretsEqual(given?.password ?? '', password);
    if (!given || !user || !password || !userOk || !passwordOk) {
      ctx.set('WWW-Authenticate', 'Basic realm="switchboard admin", charset="UTF-8"');
      throw new UnauthorizedError('Admin credentials are required (basic auth).');
    }
    await next();
  };
}
