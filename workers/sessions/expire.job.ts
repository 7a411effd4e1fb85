/**
 * sessions.expire: end the interactions their channel has ended (chatapp window closed, web chat
 * idle), then close the sessions whose last activity is at or before now minus their resume window.
 */
import type { JobHandler } from '../runner.js';
import { expireSessions } from '../../shared/sessions/resolve.js';
import { endTimedOutInteractions } from '../../shared/sessions/interactions.js';
import { logger } from '../../shared/logger.js';
import { endQuietChannelInteractions } from '../../shared/channels/idle.js';
import { queueSummaries } from '../../shared/sessions/summary.js';

export const expireJob: JobHandler<'sessions.expire'> = async () => {
  const interactionsEnded = (await endTimedOutInteractions()) + (await endQuietChannelInteractions());
  const closed = await expireSessions();
  await queueSummaries(closed);
  if (closed.length || interactionsEnded) logger('sessions').info({ closed: closed.length, interactions_ended: interactionsEnded }, 'expired sessions closed, timed-out interactions ended');
  return { closed: closed.length, interactions_ended: interactionsEnded };
};
