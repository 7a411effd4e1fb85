import type { Middleware } from 'koa';
import { config } from '../../shared/config.js';
import { ServiceUnavailableError } from '../../shared/errors.js';

/** SERVICE_SESSION_SYSTEM=false: every session-memory endpoint answers 503 before auth and validation. */
export function sessionSystemGate(): Middleware {
  return async (_ctx, next) => {
    if (!config().sessions.enabled) throw new ServiceUnavailableError('The session system is switched off (SERVICE_SESSION_SYSTEM=false).');
    await next();
  };
}
