/** sessions.deliver: persist one accepted session event, then broadcast it on the bus. */
import type { JobHandler } from '../runner.js';
import { deliver } from '../../shared/sessions/deliver.js';

export const deliverJob: JobHandler<'sessions.deliver'> = async (payload) => {
  const event = await deliver(payload);
  return event ? { sequence: event.sequence } : { skipped: true };
};
