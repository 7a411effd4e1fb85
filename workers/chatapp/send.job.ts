/** chatapp.send: delivers one recorded outbound message; a refusal by the provider is not retried. */
import { UnrecoverableError, type Job } from 'bullmq';
import { deliver, PermanentSendError } from '../../shared/chatapp/outbound.js';
import type { JobHandler } from '../runner.js';

export const sendMessage: JobHandler<'chatapp.send'> = async ({ message_id }, job: Job) => {
  const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  try {
    const message = await deliver(message_id, finalAttempt);
    return { status: message?.status, provider_message_id: message?.provider_message_id };
  } catch (err) {
    if (err instanceof PermanentSendError) throw new UnrecoverableError(err.message);
    throw err;
  }
};
