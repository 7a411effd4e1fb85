/** stream.drain-parked: write a parked session's held events in order, then let its lane have it again. */
import type { JobHandler } from '../runner.js';
import { drainParked } from '../../shared/stream/persist.js';

export const drainParkedJob: JobHandler<'stream.drain-parked'> = (payload, job) => drainParked(payload.session_id, job);
