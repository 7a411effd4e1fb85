/** sessions.deliver: persist one accepted session event, then broadcast it on the bus. */
import { deliver } from '../../shared/sessions/deliver.js';
import type { DeliverJob } from '../../shared/sessions/schemas.js';

export async function deliverJob(payload: DeliverJob) {
  const event = await deliver(payload);
  return event ? { sequence: event.sequence } : { skipped: true };
}
