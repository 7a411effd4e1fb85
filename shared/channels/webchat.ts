/**
 * Web chat (POST /api/chat): the user's message is published at once on channel `chat`, the agent
 * answers in a worker (`chatapp.webchat`, emitting TYPING / TOOL_CALL / TOOL_RESULT), the reply is
 * published, and the request waits on the bus for that reply to return it.
 */
import { randomUUID } from 'node:crypto';
import { config } from '../config.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { enqueue, type JobPayload } from '../queues.js';
import type { BusEvent } from '../bus.js';
import { z, uuid } from '../zod.js';
import type { ToolCallRecord } from '../agent/agent.js';
import { takeLimit } from '../limits.js';
import { resolveSession } from '../sessions/resolve.js';
import { acceptMessage, enqueueAndAwait } from '../stream/index.js';
import { getInteraction, getSession } from '../sessions/sessions.store.js';
import { WEB_CHANNEL } from '../agent/session-turn.js';
import { openInteraction, runTurn } from './turn.js';
/** How long POST /api/chat waits for the reply before answering 202 (the reply still arrives on the event stream). */
export const WEB_CHAT_WAIT_MS = 55_000;

export const webChatRequestSchema = z
  .object({
    user_id: uuid(),
    message: z.string().trim().min(1, 'must not be empty').max(32_000),
    interaction_id: uuid().optional().describe('the chat interaction to continue; omitted: the active chat interaction of the session, or a new one'),
  })
  .openapi('WebChatRequest');

const toolCallSchema = z.object({ tool_name: z.string(), ok: z.boolean() });

export const webChatResponseSchema = z
  .object({
    session_id: uuid(),
    interaction_id: uuid(),
    resumed: z.boolean().describe('true when an existing session was resumed'),
    turn_id: uuid().describe('id of this exchange (metadata.turn_id of both published messages)'),
    user_message_id: uuid(),
    status: z.enum(['answered', 'pending']).describe('pending: the reply was not ready in time; it will arrive on the event stream'),
    reply: z.string().nullable(),
    reply_message_id: uuid().nullable(),
    tool_calls: z.array(toolCallSchema).describe('tools the agent called for this reply, in order'),
  })
  .openapi('WebChatResponse');
export type WebChatResponse = z.output<typeof webChatResponseSchema>;

async function chatInteraction(sessionId: string, requested?: string): Promise<string> {
  if (requested) {
    const interaction = await getInteraction(requested);
    if (interaction.session_id !== sessionId) {
      throw new NotFoundError(`Interaction ${requested} is not part of the user's session.`, [{ path: 'body.interaction_id', message: "not an interaction of the user's session" }]);
    }
    if (interaction.channel !== WEB_CHANNEL) {
      throw new ValidationError(`Interaction ${requested} belongs to channel ${interaction.channel}, not chat.`, [{ path: 'body.interaction_id', message: 'must be a chat interaction' }]);
    }
    if (interaction.status !== 'active') throw new ConflictError(`Interaction ${requested} is closed; start a new one by omitting interaction_id.`, [], { current_status: interaction.status });
    return interaction.interaction_id;
  }
  return openInteraction(sessionId, WEB_CHANNEL);
}

/** The assistant MESSAGE of a turn on the bus. */
const replyOf = (turnId: string) => (e: BusEvent) =>
  e.event_type === 'MESSAGE' && e.data.role === 'assistant' && (e.data.metadata as { turn_id?: string } | undefined)?.turn_id === turnId;

/** One web chat exchange: publish the user's message, have the agent answer in a worker, return the reply. */
export async function webChat(input: z.output<typeof webChatRequestSchema>, waitMs = WEB_CHAT_WAIT_MS): Promise<WebChatResponse> {
  const { session, resumed } = await resolveSession(input.user_id);
  const interactionId = await chatInteraction(session.session_id, input.interaction_id);
  // Per person over all channels; refused here (429) before the message is published or a job queued.
  await takeLimit('agentTurns', input.user_id);
  const turnId = randomUUID();
  // Published at once; waiting for it to be persisted puts it in the history the agent reads.
  const user = await acceptMessage(
    session.session_id,
    { channel: WEB_CHANNEL, role: 'user', content: input.message, interaction_id: interactionId, metadata: { turn_id: turnId } },
    { waitMs: config().sessions.publishWaitMs },
  );
  const reply = await enqueueAndAwait(session.session_id, replyOf(turnId), waitMs, () =>
    enqueue('chatapp.webchat', { turn_id: turnId, session_id: session.session_id, interaction_id: interactionId, message: input.message }),
  );
  const metadata = (reply?.data.metadata ?? {}) as { tool_calls?: Array<{ tool_name: string; ok: boolean }> };
  return {
    session_id: session.session_id,
    interaction_id: interactionId,
    resumed,
    turn_id: turnId,
    user_message_id: user.message_id,
    status: reply ? 'answered' : 'pending',
    reply: reply ? String(reply.data.content) : null,
    reply_message_id: reply ? reply.id : null,
    tool_calls: metadata.tool_calls ?? [],
  };
}

/** The `chatapp.webchat` job: runs the agent for a turn and publishes its reply (once, whatever the retries). */
export async function answerWebChat(
  turn: JobPayload<'chatapp.webchat'>,
  finalAttempt: boolean,
): Promise<{ reply: string; tool_calls: ToolCallRecord[] }> {
  const { user_id } = await getSession(turn.session_id);
  return runTurn({
    // Counted against LIMIT_AGENT_TURNS_PER_MINUTE when the message came in (429 there).
    turnCounted: true,
    channel: WEB_CHANNEL,
    session_id: turn.session_id,
    interaction_id: turn.interaction_id,
    user_id,
    message: turn.message,
    published: true,
    journalKey: `webchat:${turn.turn_id}`,
    finalAttempt,
    fromPerson: true,
    publish: {
      idempotencyKey: `webchat:${turn.turn_id}:assistant`,
      metadata: ({ tool_calls }) => ({ turn_id: turn.turn_id, tool_calls: tool_calls.map((c) => ({ tool_name: c.tool_name, ok: c.ok })) }),
    },
  });
}
