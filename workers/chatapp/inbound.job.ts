/** chatapp.inbound: processes one recorded inbound message (user, window, session, agent, publish, reply). */
import type { Job } from 'bullmq';
import { processInbound } from '../../shared/chatapp/inbound.js';
import type { jobDefinitions } from '../../shared/queues.js';
import type { Handler } from '../runner.js';

export const processInboundMessage: Handler<(typeof jobDefinitions)['chatapp.inbound']['schema']> = async ({ message_id }, job: Job) =>
  processInbound(message_id, job.attemptsMade + 1 >= (job.opts.attempts ?? 1));
