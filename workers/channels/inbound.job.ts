/** channels.inbound: processes one recorded inbound message of a contract channel (user, session, interaction, agent, publish, reply). */
import type { Job } from 'bullmq';
import { processInbound } from '../../shared/channels/pipeline.js';
import type { JobHandler } from '../runner.js';

export const processChannelInbound: JobHandler<'channels.inbound'> = async ({ message_id }, job: Job) =>
  processInbound(message_id, job.attemptsMade + 1 >= (job.opts.attempts ?? 1));
