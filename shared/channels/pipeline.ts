/**
 * The steps every channel of the contract runs (see contract.ts), in spec 000's order for an inbound
 * message: recorded once per provider id and queued (`channels.inbound`); then the user, the session,
 * the interaction, the agent, publishing, and the reply, which is recorded once and sent by
 * `channels.send`. Each step is safe to repeat when its job is retried.
 */
import { ServiceUnavailableError } from '../errors.js';
import { enqueue } from '../queues.js';
import { logger } from '../logger.js';
import { runAgent } from '../agent/agent.js';
import { turnJournal } from '../agent/turn-steps.store.js';
import { AGENT_FAILED_REPLY, agentTurnRefusal, sessionEvents } from '../agent/session-turn.js';
import type { User } from '../users/users.store.js';
import { resolveSession } from '../sessions/resolve.js';
import { startInteraction } from '../sessions/interactions.js';
import { listInteractions } from '../sessions/sessions.store.js';
import { acceptMessage } from '../stream/index.js';
import { getContext } from '../sessions/context.js';
import type { Channel } from '../sessions/schemas.js';
import { adapterOf } from './adapters.js';
import { PermanentSendError, type ChannelAdapter } from './contract.js';
import {
  getMessage, getReplyTo, insertInboundOnce, insertReplyOnce, markAttemptFailed, markProcessed, markSending, markSent, recordedProviderIds,
  type ChannelMessage, type NewInbound,
} from './messages.store.js';

/** 503 naming the settings a channel still needs, before anything is recorded. */
export function assertLive(adapter: ChannelAdapter): void {
  const missing = adapter.missingSettings();
  if (missing.length) {
    throw new ServiceUnavailableError(`The ${adapter.channel} channel is not configured: set ${missing.join(', ')}.`, [], { channel: adapter.channel, missing_settings: missing });
  }
}

/**
 * Records a verified inbound message once per provider id and queues its processing. A repeated
 * delivery is not processed again; it is re-queued only while it was never processed (the job id
 * makes that a no-op while the first job exists).
 */
export async function acceptInbound(message: NewInbound): Promise<{ message: ChannelMessage; duplicate: boolean }> {
  const { message: stored, created } = await insertInboundOnce(message);
  if (stored.status === 'received') await enqueue('channels.inbound', { message_id: stored.message_id });
  return { message: stored, duplicate: !created };
}

/**
 * The session's active interaction of `channel` with this channel_ref, or a new one (which publishes
 * CHANNEL_JOINED). A channel's conversation (an SMS number, a Slack channel, an email thread, a call)
 * thereby maps to one interaction while it lasts.
 */
export async function openInteraction(sessionId: string, channel: string, channelRef: string, metadata: Record<string, unknown> = {}): Promise<string> {
  const open = (await listInteractions(sessionId)).filter((i) => i.channel === channel && i.status === 'active' && i.channel_ref === channelRef).at(-1);
  if (open) return open.interaction_id;
  return (await startInteraction(sessionId, { channel: channel as Channel, channel_ref: channelRef, metadata })).interaction_id;
}

/** Records the reply to an inbound message once and queues it (suppressed replies are recorded, not sent). */
async function replyWith(adapter: ChannelAdapter, inbound: ChannelMessage, body: string, to: { user: User | undefined; session_id: string | null; interaction_id: string | null; suppressed?: boolean }) {
  const recorded = await insertReplyOnce({
    ...adapter.reply(inbound, body.slice(0, adapter.maxReplyChars)),
    reply_to: inbound.message_id,
    user_id: to.user?.user_id ?? null,
    session_id: to.session_id,
    interaction_id: to.interaction_id,
    ...(to.suppressed ? { status: 'suppressed' as const } : {}),
  });
  if (recorded.status === 'queued' || recorded.status === 'sending') await enqueue('channels.send', { message_id: recorded.message_id });
  return recorded;
}

export type InboundOutcome = { outcome: string; reply?: string | null };

/**
 * Processes one recorded inbound message (the `channels.inbound` job). `finalAttempt`: the agent's
 * failure is answered with an apology instead of being retried again.
 */
export async function processInbound(messageId: string, finalAttempt: boolean): Promise<InboundOutcome> {
  const message = await getMessage(messageId);
  if (!message || message.direction !== 'inbound' || message.status !== 'received') return { outcome: 'skipped' };
  const adapter = adapterOf(message.channel);
  const log = logger(`channels.${message.channel}`);

  // 1. The user; an unknown sender is told so (if the channel says anything), and the record says so.
  const user = await adapter.findUser(message);
  if (!user) {
    if (adapter.unknownSenderReply) await replyWith(adapter, message, adapter.unknownSenderReply, { user: undefined, session_id: null, interaction_id: null });
    await markProcessed(messageId, { user_id: null, session_id: null, interaction_id: null });
    log.info({ message_id: messageId }, 'inbound message from an unknown sender');
    return { outcome: 'unknown_sender', reply: adapter.unknownSenderReply };
  }
  // 2. What the channel handles itself (carrier keywords): answered as the channel says, no agent.
  const intercepted = await adapter.intercept?.(message, user);
  if (intercepted) {
    if (intercepted.reply) await replyWith(adapter, message, intercepted.reply, { user, session_id: null, interaction_id: null });
    await markProcessed(messageId, { user_id: user.user_id, session_id: null, interaction_id: null, metadata: { outcome: intercepted.outcome } });
    return intercepted;
  }
  // 3. The session and the channel's interaction on it.
  const { session } = await resolveSession(user.user_id);
  const interactionId = await openInteraction(session.session_id, adapter.channel, adapter.interactionRef(message), adapter.publishMetadata(message));
  // 4. The agent, with the session's history as context. Its reply is recorded before anything is
  //    published, so a retried job publishes and sends that reply instead of asking the model again.
  let recorded = await getReplyTo(messageId);
  if (!recorded) {
    const { conversation_history } = await getContext(session.session_id);
    let answer: string;
    try {
      const turn = {
        channel: adapter.channel,
        history: conversation_history,
        message: message.body ?? '',
        caller: { kind: 'agent' as const, id: session.session_id, user_id: user.user_id },
        // A retried message replays the model answers and tool results it recorded (no tool runs twice).
        ...(await turnJournal(`${adapter.channel}:${messageId}`, session.session_id)),
      };
      answer = (await agentTurnRefusal(user.user_id)) ?? (await runAgent(turn, sessionEvents(session.session_id, adapter.channel, interactionId))).reply;
    } catch (err) {
      if (!finalAttempt) throw err;
      log.error({ err, message_id: messageId }, 'agent failed for good; answering with an apology');
      answer = AGENT_FAILED_REPLY;
    }
    const suppressed = adapter.mayReply ? !(await adapter.mayReply(user)) : false;
    recorded = await replyWith(adapter, message, answer, { user, session_id: session.session_id, interaction_id: interactionId, suppressed });
  } else if (recorded.status === 'queued' || recorded.status === 'sending') {
    await enqueue('channels.send', { message_id: recorded.message_id });
  }
  // 5. Publish the user's message and the reply (idempotency keys: a retry publishes nothing twice).
  const metadata = adapter.publishMetadata(message);
  const key = `${adapter.channel}:${message.provider_message_id ?? messageId}`;
  await acceptMessage(session.session_id, { channel: adapter.channel, role: 'user', content: message.body || '[empty message]', interaction_id: interactionId, metadata }, { idempotencyKey: `${key}:user` });
  await acceptMessage(session.session_id, { channel: adapter.channel, role: 'assistant', content: recorded.body!, interaction_id: interactionId, metadata }, { idempotencyKey: `${key}:assistant` });
  await markProcessed(messageId, { user_id: user.user_id, session_id: session.session_id, interaction_id: interactionId });
  return { outcome: recorded.status === 'suppressed' ? 'reply_suppressed' : 'processed', reply: recorded.body };
}

/**
 * Delivers one recorded outbound message (the `channels.send` job); a message already sent is not
 * sent again. The intent (status sending) is recorded before the provider is called; a retry of a
 * message left sending first asks the provider (when the channel can) and adopts what it finds.
 * A provider refusal marks the message failed and throws PermanentSendError; other faults are
 * recorded and rethrown for the queue's retry.
 */
export async function deliver(messageId: string, finalAttempt: boolean): Promise<ChannelMessage | undefined> {
  const message = await getMessage(messageId);
  if (!message || message.direction !== 'outbound' || (message.status !== 'queued' && message.status !== 'sending')) return message;
  const adapter = adapterOf(message.channel);
  const log = logger(`channels.${message.channel}`);
  try {
    const found = message.status === 'sending' && adapter.findSent ? await adapter.findSent(message, (ids) => recordedProviderIds(message.channel, ids)) : undefined;
    if (found) {
      log.info({ message_id: messageId, provider_message_id: found.provider_message_id }, 'an earlier attempt reached the provider; adopted, not sent again');
      await markSent(messageId, found.provider_message_id, found.metadata);
    } else {
      await markSending(messageId);
      const receipt = await adapter.send(message);
      await markSent(messageId, receipt.provider_message_id, receipt.metadata);
    }
  } catch (err) {
    const permanent = err instanceof PermanentSendError;
    const reason = err instanceof Error ? err.message : String(err);
    await markAttemptFailed(messageId, reason, finalAttempt || permanent);
    throw err;
  }
  return getMessage(messageId);
}
