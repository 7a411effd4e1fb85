/** stream.deliver: write then publish the events of this lane job and of those waiting behind it (persist.ts, deliverLaneRun). */
import type { JobHandler } from '../runner.js';
import { deliverLaneRun } from '../../shared/stream/persist.js';

export const deliverJob: JobHandler<'stream.deliver'> = (payload, job) => deliverLaneRun(payload.events, job);
