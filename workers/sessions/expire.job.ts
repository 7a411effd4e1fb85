/** sessions.expire: close the sessions whose last activity is at or before now minus their resume window. */
import type { JobHandler } from '../runner.js';
import { expireSessions } from '../../shared/sessions/resolve.js';
import { logger } from '../../shared/logger.js';
import { queueSummaries } from '../../shared/sessions/summary.js';

export const expireJob: JobHandler<'sessions.expire'> = async () => {
  const closed = await expireSessions();
  if (closed.length) logger('sessions').info({ closed: closed.length }, 'expired sessions closed');
  await queueSummaries(closed);
  return { closed: closed.length };
};
