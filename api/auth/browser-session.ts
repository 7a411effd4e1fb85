/**
 * The browser session of a request: the httpOnly cookie, the session row it names (looked up once
 * per request, only when a route asks), and the person it records actions under.
 */
import type { Context } from 'koa';
import { config } from '../../shared/config.js';
import type { AuthSession } from '../../shared/auth/auth-sessions.store.js';
import { liveAuthSession } from '../../shared/auth/roles-refresh.js';

export const sessionCookie = 'sb_session';
/** Binds a sign-in in progress to the browser that started it (its value is the OIDC state). */
export const loginCookie = 'sb_login';
/** The header the app sends with unsafe requests, carrying the session's CSRF token (from /me). */
export const csrfHeader = 'X-CSRF-Token';

const cached = Symbol('authSession');

/** Cookie options: httpOnly, SameSite=Lax, Secure when PUBLIC_URL is https. */
export function cookieOptions(expires?: Date) {
  return {
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: config().publicUrl.startsWith('https://'),
    path: '/',
    overwrite: true,
    ...(expires ? { expires } : {}),
  };
}

/**
 * Sets or clears a cookie. Behind a TLS-terminating proxy the request itself may look like http;
 * PUBLIC_URL decides whether cookies are Secure, so Koa's check against the request is lifted here.
 */
export function setCookie(ctx: Context, name: string, value: string | null, expires?: Date): void {
  const options = cookieOptions(expires);
  if (options.secure) (ctx.cookies as unknown as { secure: boolean }).secure = true;
  ctx.cookies.set(name, value, value === null ? { ...options, expires: new Date(0) } : options);
}

/** The live session of the request's cookie, its roles re-read when AUTH_ROLES_REFRESH has passed, or undefined (memoised on the context). */
export async function browserSession(ctx: Context): Promise<AuthSession | undefined> {
  const state = ctx.state as { [cached]?: Promise<AuthSession | undefined> };
  if (!(cached in state)) {
    const token = ctx.cookies.get(sessionCookie);
    state[cached] = token ? liveAuthSession(token) : Promise.resolve(undefined);
  }
  return state[cached];
}

/** The signed-in person a route was authorised for (set by the auth middleware), if the caller is a browser session. */
export function personOf(ctx: Context): AuthSession | undefined {
  return (ctx.state as { person?: AuthSession }).person;
}

/**
 * Who an action is recorded under: the signed-in person's name (or email) for a browser session,
 * else what the API caller said (`given`), as before sign-in existed.
 */
export function actorOf(ctx: Context, given: string): string;
export function actorOf(ctx: Context, given: string | undefined): string | undefined;
export function actorOf(ctx: Context, given: string | undefined): string | undefined {
  const person = personOf(ctx);
  return person ? person.name || person.email || person.subject : given;
}
