/** stream.deliver: write then publish the events one request accepted into a session's stream (its lane's job). */
import type { JobHandler } from '../runner.js';
import { deliverLaneJob } from '../../shared/stream/persist.js';

export const deliverJob: JobHandler<'stream.deliver'> = (payload) => deliverLaneJob(payload.events);
