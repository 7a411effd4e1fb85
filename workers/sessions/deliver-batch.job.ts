/** sessions.deliver-batch: persist a lane's group of accepted session events, then broadcast them. */
import type { JobHandler } from '../runner.js';
import { deliverBatch } from '../../shared/sessions/deliver.js';

export const deliverBatchJob: JobHandler<'sessions.deliver-batch'> = (payload) => deliverBatch(payload.events);
