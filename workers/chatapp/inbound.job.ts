/** chatapp.inbound: processes one recorded inbound message (user, window, session, agent, publish, reply). */
import type { Job } from 'bullmq';
import { processInbound } from '../../shared/chatapp/inbound.js';
import type { JobHandler } from '../runner.js';

export const processInboundMessage: JobHandler<'chatapp.inbound'> = async ({ message_id }, job: Job) =>
  processInbound(message_id, job.attemptsMade + 1 >= (job.opts.attempts ?? 1));
