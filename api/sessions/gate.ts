import type { Middleware } from 'koa';
import { config } from '../../shared/config.js';
import { ServiceUnavailableError } from '../../shared/errors.js';
import { ApiRouter } from '../routing.js';

/** The meaning of the 503 every route behind the gate documents. */
export const sessionSystemOff = 'The session system is switched off (SERVICE_SESSION_SYSTEM=false)';

/** SERVICE_SESSION_SYSTEM=false: every session-memory endpoint answers 503 before auth and validation. */
export function sessionSystemGate(): Middleware {
  return async (_ctx, next) => {
    if (!config().sessions.enabled) throw new ServiceUnavailableError('The session system is switched off (SERVICE_SESSION_SYSTEM=false).');
    await next();
  };
}

/** A router whose every route sits behind the session-system gate (and documents its 503). */
export function sessionSystemRouter(): ApiRouter {
  return new ApiRouter({ use: [sessionSystemGate()], errors: { 503: sessionSystemOff } });
}
