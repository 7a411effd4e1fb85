/** chatapp.webchat: the agent answers one web chat turn and the reply is published. */
import type { Job } from 'bullmq';
import { answerWebChat } from '../../shared/channels/webchat.js';
import type { JobHandler } from '../runner.js';

export const answerWebChatTurn: JobHandler<'chatapp.webchat'> = async (turn, job: Job) => {
  const { reply, tool_calls } = await answerWebChat(turn, job.attemptsMade + 1 >= (job.opts.attempts ?? 1));
  return { reply, tool_calls: tool_calls.map((c) => c.tool_name) };
};
