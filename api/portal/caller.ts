/**
 * Who a portal request acts for. A signed-in person acts for their own user (matched at sign-in);
 * an API-key caller names the user in `X-User-Id`. Staff (role staff) see and work every case.
 */
import type { Context, Middleware } from 'koa';
import { db } from '../../shared/db/index.js';
import { NotFoundError, UnauthorizedError, ValidationError } from '../../shared/errors.js';
import { personOf } from '../auth/browser-session.js';
import { ApiRouter } from '../routing.js';

export interface PortalCaller {
  userId: string;
  staff: boolean;
}

export const actingUserNote =
  'Signed-in people act for themselves; an API-key caller acts for the user named in the `X-User-Id` header (a UUID of `users`; unknown → 404). Only that user\'s rows are read or changed: another person\'s id answers 404.';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function portalCaller(ctx: Context): Promise<PortalCaller> {
  const person = personOf(ctx);
  const k = db();
  if (person) {
    const row = (await k('users').select('user_id').where({ idp_subject: person.subject }).first()) as { user_id: string } | undefined;
    if (!row) throw new UnauthorizedError('Sign in again: this session has no portal account.');
    return { userId: row.user_id, staff: person.roles.includes('staff') };
  }
  const given = ctx.get('X-User-Id');
  if (!given || !uuidPattern.test(given)) {
    throw new ValidationError('API-key callers name the user they act for in X-User-Id.', [{ path: 'headers.x-user-id', message: 'must be a UUID' }]);
  }
  const row = (await k('users').select('user_id', 'roles').where({ user_id: given }).first()) as { user_id: string; roles: string[] } | undefined;
  if (!row) throw new NotFoundError(`No user ${given}.`);
  return { userId: row.user_id, staff: row.roles.includes('staff') };
}

/** Resolves whom the request acts for once, for every route of its router (after auth and validation). */
const resolveCaller: Middleware = async (ctx, next) => {
  ctx.state.portalCaller = await portalCaller(ctx);
  await next();
};

/** Whom the request acts for, as the portal router resolved it. */
export function callerOf(ctx: Context): PortalCaller {
  const caller = ctx.state.portalCaller as PortalCaller | undefined;
  if (!caller) throw new Error('callerOf: the route is not on a portalRouter()');
  return caller;
}

/** A router whose every route acts for one person (callerOf). */
export const portalRouter = () => new ApiRouter({ beforeHandler: [resolveCaller] });
