import type { Context, Middleware } from 'koa';
import { config } from '../../shared/config.js';
import { ForbiddenError, UnauthorizedError } from '../../shared/errors.js';
import type { Role } from '../../shared/auth/roles.js';
import { browserSession, csrfHeader } from '../auth/browser-session.js';
import { secretDigest, secretsEqual } from '../../shared/secrets.js';
import { identifyKey } from '../../shared/auth/api-keys.js';
import { hasScope, type Authority, type Scope } from '../../shared/auth/scopes.js';

/** The API key a request carries: X-API-Key, or Authorization: Bearer. */
export function presentedApiKey(ctx: Context): string | undefined {
  const header = ctx.get('X-API-Key');
  if (header) return header;
  const m = /^Bearer\s+(.+)$/i.exec(ctx.get('Authorization'));
  return m?.[1]?.trim();
}

/** A stable, non-secret id of an API_KEYS key (for audit rows): `key:` + the first 16 hex digits of its SHA-256. */
export const apiKeyId = (key: string) => `key:${secretDigest(key).toString('hex').slice(0, 16)}`;

/** Basic-auth user and password of a request, if any. */
export function basicCredentials(ctx: Context): { user: string; password: string } | undefined {
  const m = /^Basic\s+(.+)$/i.exec(ctx.get('Authorization'));
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const at = decoded.indexOf(':');
  return at < 0 ? undefined : { user: decoded.slice(0, at), password: decoded.slice(at + 1) };
}

/**
 * Checks an API key: a key of API_KEYS (full access) or a live named key with the scope the route
 * needs (403 naming it otherwise). The key's id (never the key) is left in ctx.state.apiKeyId for
 * per-key limits and audit rows, its rights in ctx.state.authority.
 */
async function checkApiKey(ctx: Context, key: string, scope: Scope | 'any'): Promise<void> {
  const identity = await identifyKey(key);
  if (!identity) throw new UnauthorizedError('The API key is not valid.');
  if (!hasScope(identity.scopes, scope)) {
    throw new ForbiddenError(`This API key lacks the scope ${scope} (it has ${identity.scopes.join(', ') || 'none'}).`, [], { required_scope: scope });
  }
  ctx.state.apiKeyId = identity.id;
  ctx.state.authority = { kind: 'key', key_id: identity.id, scopes: identity.scopes } satisfies Authority;
}

/** Whether the request's key holds a scope (false for browser sessions). */
export function keyHasScope(ctx: Context, scope: Scope): boolean {
  const authority = ctx.state.authority as Authority | undefined;
  return authority?.kind === 'key' && hasScope(authority.scopes, scope);
}

/** Service routes: a key from API_KEYS or a named key with `scope` (dev accepts dev-key when none is configured). */
export function requireApiKey(scope: Scope | 'any' = 'any'): Middleware {
  return async (ctx, next) => {
    const key = presentedApiKey(ctx);
    if (!key) throw new UnauthorizedError('An API key is required: send it in X-API-Key or Authorization: Bearer.');
    await checkApiKey(ctx, key, scope);
    await next();
  };
}

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * CSRF defence for a cookie-authenticated unsafe request: a cross-site origin is refused outright,
 * and the session's CSRF token must come back in X-CSRF-Token (a cross-site form cannot set headers),
 * or, for a form of our own pages, in `given` (a hidden field a cross-site page cannot read).
 */
export function checkCsrf(ctx: Context, csrfToken: string, given = ctx.get(csrfHeader)): void {
  const site = ctx.get('Sec-Fetch-Site');
  const origin = ctx.get('Origin');
  if (site === 'cross-site' || (origin && origin !== new URL(config().publicUrl).origin)) {
    throw new ForbiddenError('Cross-site requests with the session cookie are refused.');
  }
  if (!given || !secretsEqual(given, csrfToken)) {
    throw new ForbiddenError(`A ${csrfHeader} header with the session's CSRF token (GET /api/global/auth/me) is required for ${ctx.method} requests.`);
  }
}

export interface CallerRule {
  /** Whether an API key is accepted instead of a session. */
  apiKey: boolean;
  /** Role a browser session needs (one of them, when several); undefined: any signed-in person. */
  role?: Role | readonly Role[];
  /** Scope an API key needs (see shared/auth/scopes.ts); default: a full-access key. */
  scope?: Scope | 'any';
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
      await checkApiKey(ctx, key, rule.scope ?? '*');
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
