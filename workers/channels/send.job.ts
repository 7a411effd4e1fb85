/** channels.send: delivers one recorded outbound message of any channel; a refusal by the provider is not retried. */
import { UnrecoverableError, type Job } from 'bullmq';
import { deliver } from '../../shared/channels/pipeline.js';
import { PermanentSendError } from '../../shared/channels/contract.js';
import type { JobHandler } from '../runner.js';

export const sendChannelMessage: JobHandler<'channels.send'> = async ({ message_id, channel }, job: Job) => {
  try {
    const message = await deliver(message_id, job.attemptsMade + 1 >= (job.opts.attempts ?? 1), channel);
    return { status: message?.status, provider_message_id: message?.provider_message_id };
  } catch (err) {
    if (err instanceof PermanentSendError) throw new UnrecoverableError(err.message);
    throw err;
  }
};

/** chatapp.send, the messaging app's former job kind: run as channels.send for jobs queued before a deploy. */
export const sendChatappMessage: JobHandler<'chatapp.send'> = ({ message_id }, job: Job) => sendChannelMessage({ message_id, channel: 'chatapp' }, job);
