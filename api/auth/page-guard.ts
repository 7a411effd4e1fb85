/**
 * Guards for the app's PAGES (not /api): a person without a session is sent to sign-in and comes
 * back to the page; a signed-in person without the page's role gets a 403 page. The person is left
 * in ctx.state.person (personOf(ctx)).
 *
 *   app.use(pageGuard());                           // the path rules below, for every page request
 *   router.get('/admin/(.*)', requirePage('sre'));  // or per route
 */
import type { Context, Middleware } from 'koa';
import type { Role } from '../../shared/auth/roles.js';
import { browserSession } from './browser-session.js';
import { sendHtmlPage } from './error-page.js';

/** The sign-in URL that returns to `path` (path and query of this site). */
export function signInUrl(path: string): string {
  return `/api/global/auth/login?return_to=${encodeURIComponent(path)}`;
}

/** Requires a signed-in person (with `role`, or one of them, when given) for a page; else redirect (302) or 403 page. */
export function requirePage(role?: Role | readonly Role[]): Middleware {
  return async (ctx, next) => {
    if (await pageAllowed(ctx, role)) await next();
  };
}

/** Checks the page request; answers it (302 / 403) and returns false when it may not go on. */
export async function pageAllowed(ctx: Context, role?: Role | readonly Role[]): Promise<boolean> {
  const session = await browserSession(ctx);
  if (!session) {
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect(signInUrl(ctx.originalUrl));
    return false;
  }
  const needed = role === undefined ? [] : typeof role === 'string' ? [role] : role;
  if (needed.length && !needed.some((r) => session.roles.includes(r))) {
    sendHtmlPage(ctx, 403, 'Not allowed', `This page needs the ${needed.join(' or ')} role; ${session.name} has ${session.roles.join(', ')}.`, [
      ['/', 'Home'],
      ['/api/global/auth/login', 'Sign in as someone else'],
    ]);
    return false;
  }
  ctx.state.person = session;
  return true;
}

/** Who works the CRM screens (/admin/crm): sales, and the operators. */
export const crmRoles = ['sales', 'sre'] as const;

/** Portal paths (spec 002): any signed-in person. */
export const portalPaths = ['/portal', '/contacts', '/documents', '/cases', '/profile', '/history', '/automations'];

/** The role a page path needs: null for a path this guard leaves alone, undefined for "any signed-in person". */
export function pageRole(path: string): Role | readonly Role[] | undefined | null {
  const under = (prefix: string) => path === prefix || path.startsWith(prefix + '/');
  if (path.startsWith('/api/') || under('/admin/queues')) return null;
  if (under('/admin/crm')) return crmRoles;
  if (under('/admin')) return 'sre';
  if (path === '/' || portalPaths.some(under)) return undefined;
  return null;
}

/**
 * The path rules in one middleware, for GET/HEAD page requests: `/admin/crm` needs `sales` or `sre`,
 * the rest of `/admin` (except /admin/queues, which keeps basic auth) needs `sre`; `/` and the portal paths need a session; everything else
 * (/api, assets, docs) passes untouched.
 */
export function pageGuard(): Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const role = pageRole(ctx.path);
    if (role === null) return next();
    if (await pageAllowed(ctx, role)) await next();
  };
}
