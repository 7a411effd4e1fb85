/** channels.inbound: the turn of one recorded inbound message of any channel (user, window, session, interaction, agent, reply, publish). */
import type { Job } from 'bullmq';
import { processInbound } from '../../shared/channels/pipeline.js';
import type { JobHandler } from '../runner.js';

export const processChannelInbound: JobHandler<'channels.inbound'> = async ({ message_id, channel }, job: Job) =>
  processInbound(message_id, job.attemptsMade + 1 >= (job.opts.attempts ?? 1), channel);

/** chatapp.inbound, the messaging app's former job kind: run as channels.inbound for jobs queued before a deploy. */
export const processChatappInbound: JobHandler<'chatapp.inbound'> = ({ message_id }, job: Job) => processChannelInbound({ message_id, channel: 'chatapp' }, job);
