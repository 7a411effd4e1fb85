/** chatapp.webchat: the agent answers one web chat turn and the reply is published. */
import type { Job } from 'bullmq';
import { answerWebChat } from '../../shared/chatapp/webchat.js';
import type { jobDefinitions } from '../../shared/queues.js';
import type { Handler } from '../runner.js';

export const answerWebChatTurn: Handler<(typeof jobDefinitions)['chatapp.webchat']['schema']> = async (turn, job: Job) => {
  const { reply, tool_calls } = await answerWebChat(turn, job.attemptsMade + 1 >= (job.opts.attempts ?? 1));
  return { reply, tool_calls: tool_calls.map((c) => c.tool_name) };
};
