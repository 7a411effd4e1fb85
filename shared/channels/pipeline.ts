/**
 * The jobs of the recorded channels (see contract.ts): an inbound message is recorded once per
 * provider id and queued (`channels.inbound`), its turn runs (turn.ts, `runInboundTurn`) with the
 * channel's adapter and book, and each reply recorded once is sent by `channels.send`. The messaging
 * app's records stay in chatapp_messages (`channel: 'chatapp'` in the job). Each step is safe to
 * repeat when its job is retried.
 */
import { ServiceUnavailableError } from '../errors.js';
import { enqueue } from '../queues.js';
import { logger } from '../logger.js';
import { chatappAdapter, chatappBook } from './chatapp/inbound.js';
import { deliver as deliverChatapp } from './chatapp/outbound.js';
import { adapterOf } from './adapters.js';
import { PermanentSendError, type ChannelAdapter, type MessageBook } from './contract.js';
import { assertSessionSystemOn, runInboundTurn, type InboundOutcome } from './turn.js';
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
  assertSessionSystemOn();
  const { message: stored, created } = await insertInboundOnce(message);
  if (stored.status === 'received') await enqueue('channels.inbound', { message_id: stored.message_id });
  return { message: stored, duplicate: !created };
}

/** The book of the channels above: `channel_messages`, replies shaped by the adapter, sent by `channels.send`. */
export function channelBook(adapter: ChannelAdapter): MessageBook<ChannelMessage> {
  return {
    get: getMessage,
    replyTo: getReplyTo,
    recordReply: (inbound, body, { suppressed, question, ...link }) =>
      insertReplyOnce({ ...adapter.reply(inbound, body, question), ...link, reply_to: inbound.message_id, ...(suppressed ? { status: 'suppressed' as const } : {}) }),
    queueSend: async (message) => void (await enqueue('channels.send', { message_id: message.message_id })),
    markProcessed,
  };
}

/**
 * Processes one recorded inbound message (the `channels.inbound` job). `finalAttempt`: the agent's
 * failure is answered with an apology instead of being retried again.
 */
export async function processInbound(messageId: string, finalAttempt: boolean, channel?: string): Promise<InboundOutcome> {
  if (channel === chatappAdapter.channel) return runInboundTurn(chatappAdapter, chatappBook, messageId, finalAttempt);
  const message = await getMessage(messageId);
  if (!message) return { outcome: 'skipped' };
  const adapter = adapterOf(message.channel);
  return runInboundTurn(adapter, channelBook(adapter), messageId, finalAttempt);
}

/**
 * Delivers one recorded outbound message (the `channels.send` job); a message already sent is not
 * sent again. The intent (status sending) is recorded before the provider is called; a retry of a
 * message left sending first asks the provider (when the channel can) and adopts what it finds.
 * A provider refusal marks the message failed and throws PermanentSendError; other faults are
 * recorded and rethrown for the queue's retry.
 */
export async function deliver(messageId: string, finalAttempt: boolean, channel?: string): Promise<Pick<ChannelMessage, 'status' | 'provider_message_id'> | undefined> {
  // The messaging app keeps its own records (templates, rich messages, the window checked at send).
  if (channel === chatappAdapter.channel) return deliverChatapp(messageId, finalAttempt);
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
