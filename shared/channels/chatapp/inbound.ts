/**
 * Inbound messaging-app messages. The webhook only verifies the provider's signature, records the
 * message once per MessageSid and queues it; the `channels.inbound` job then runs
 * the one turn (shared/channels/turn.ts) with `chatappAdapter`: user by phone, window, keywords,
 * session, agent, reply, publish (channel chatapp, metadata {message_sid, phone}).
 */
import { ValidationError, fieldErrors } from '../../errors.js';
import { enqueue } from '../../queues.js';
import { z } from '../../zod.js';
import { findUserByPhone } from '../../users/users.store.js';
import { setConsent } from '../../users/consents.store.js';
import { runInboundTurn, type InboundOutcome } from '../turn.js';
import type { MessageBook, TurnAdapter } from '../contract.js';
import { SMS_OPT_IN_REPLY, SMS_OPT_OUT_REPLY, SMS_UNKNOWN_SENDER_REPLY, smsKeyword } from '../sms/sms.adapter.js';
import { getMessage, getReplyTo, insertInboundOnce, markProcessed, recordProviderStatus, type StoredMessage } from './messages.store.js';
import { extendWindow, windowOpen } from './window.store.js';
import { CHANNEL, queueSend, recordReply } from './outbound.js';

/** What the provider sends (form-encoded); unknown parameters are kept and signed over, but ignored. */
export const inboundParamsSchema = z
  .object({
    MessageSid: z.string().min(1).max(64),
    AccountSid: z.string().max(64).optional(),
    From: z.string().regex(/^(whatsapp:)?\+[1-9]\d{1,14}$/, 'must be whatsapp:+E164'),
    To: z.string().max(64).optional(),
    Body: z.string().max(4096).default(''),
    NumMedia: z.coerce.number().int().min(0).default(0),
    ProfileName: z.string().optional(),
    ButtonText: z.string().optional(),
    ButtonPayload: z.string().optional(),
    WaId: z.string().optional(),
  })
  .catchall(z.string())
  .openapi('ChatappInbound', {
    description: 'Twilio WhatsApp webhook parameters (MediaUrl0…, MediaContentType0… and any other parameter are accepted).',
  });
export type InboundParams = z.output<typeof inboundParamsSchema>;

/** Sent to a number we do not know; the opt-out and opt-in confirmations Twilio's own handling sends (the same as by SMS). */
export { SMS_UNKNOWN_SENDER_REPLY as UNKNOWN_NUMBER_REPLY, SMS_OPT_OUT_REPLY as OPT_OUT_REPLY, SMS_OPT_IN_REPLY as OPT_IN_REPLY };

/** `out` or `in` when the message is one of Twilio's opt-out or opt-in keywords (the SMS ones; HELP goes to the agent here), else null. */
export function optKeyword(body: string | null): 'out' | 'in' | null {
  const keyword = smsKeyword(body);
  return keyword === 'help' ? null : keyword;
}

/** Parses verified provider parameters (400 naming each bad one). */
export function parseInbound(params: Record<string, string>): InboundParams {
  const parsed = inboundParamsSchema.safeParse(params);
  if (!parsed.success) throw new ValidationError('The webhook parameters are invalid.', fieldErrors('body', parsed.error.issues));
  return parsed.data;
}

export const phoneOf = (from: string) => from.replace(/^whatsapp:/, '');

/** The text of an inbound message for the conversation: its body (or tapped button) and any media. */
export function inboundText(params: InboundParams): string {
  const text = params.Body || params.ButtonText || '';
  const media = Array.from({ length: params.NumMedia }, (_, i) => params[`MediaUrl${i}`]).filter(Boolean);
  const note = media.length ? `[${media.length} attachment${media.length > 1 ? 's' : ''}: ${media.join(' ')}]` : '';
  return [text, note].filter(Boolean).join('\n') || '[empty message]';
}

/**
 * Records a verified inbound message once per MessageSid and queues its processing. A repeated
 * delivery is not processed again; it is re-queued only if it was never processed (the job id
 * makes that a no-op while the first job exists).
 */
export async function acceptInbound(params: InboundParams): Promise<{ message: StoredMessage; duplicate: boolean }> {
  const { message, created } = await insertInboundOnce({
    provider_message_id: params.MessageSid,
    phone_number: phoneOf(params.From),
    body: inboundText(params),
    payload: Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])),
  });
  if (message.status === 'received') await enqueue('channels.inbound', { message_id: message.message_id, channel: CHANNEL });
  return { message, duplicate: !created };
}

export const statusParamsSchema = z
  .object({
    MessageSid: z.string().min(1).max(64),
    MessageStatus: z.string().min(1).max(40),
    ErrorCode: z.string().max(20).optional(),
    ErrorMessage: z.string().max(1000).optional(),
  })
  .catchall(z.string());

/**
 * Records a verified delivery status callback (sent, delivered, read, failed, undelivered) on the
 * outbound message; a status older than the one recorded is ignored. Returns whether one changed.
 */
export async function acceptStatusCallback(params: Record<string, string>): Promise<boolean> {
  const parsed = statusParamsSchema.safeParse(params);
  if (!parsed.success) throw new ValidationError('The status callback parameters are invalid.', fieldErrors('body', parsed.error.issues));
  const { MessageSid, MessageStatus, ErrorCode, ErrorMessage } = parsed.data;
  const error = ErrorCode ? `provider status ${MessageStatus} (code ${ErrorCode})${ErrorMessage ? `: ${ErrorMessage}` : ''}` : null;
  return recordProviderStatus(MessageSid, MessageStatus, error);
}

/** Where the messaging app keeps its messages (chatapp_messages), and how its replies go out (`channels.send` with channel chatapp). */
export const chatappBook: MessageBook<StoredMessage> = {
  get: getMessage,
  replyTo: getReplyTo,
  recordReply: (inbound, body, link) => recordReply({ reply_to: inbound.message_id, phone_number: inbound.phone_number, body, user_id: link.user_id, session_id: link.session_id }),
  queueSend,
  markProcessed: (messageId, { user_id, session_id }) => markProcessed(messageId, { user_id, session_id }),
};

/**
 * The messaging app behind the channel contract: users by phone number, the 24-hour customer window
 * opened by each inbound message, opt-out and opt-in keywords answered as the provider would.
 */
export const chatappAdapter: TurnAdapter<StoredMessage> = {
  channel: CHANNEL,
  findUser: (message) => findUserByPhone(message.phone_number),
  unknownSenderReply: SMS_UNKNOWN_SENDER_REPLY,
  interactionRef: (message) => message.phone_number,
  publishMetadata: (message) => ({ message_sid: message.provider_message_id, phone: message.phone_number }),
  window: { open: async (message, user) => void (await extendWindow(user.user_id, message.phone_number)), isOpen: windowOpen },
  // An opt-out or opt-in keyword changes the chatapp consent (recorded with source chatapp); it goes to no agent.
  async intercept(message, user) {
    const keyword = optKeyword(message.body);
    if (!keyword) return undefined;
    await setConsent(user.user_id, CHANNEL, { opted_in: keyword === 'in', consent_source: 'chatapp' });
    return keyword === 'out' ? { outcome: 'opted_out', reply: SMS_OPT_OUT_REPLY } : { outcome: 'opted_in', reply: SMS_OPT_IN_REPLY };
  },
  maxReplyChars: 1600,
};

/** The turn of one recorded inbound message (the `channels.inbound` job with channel chatapp). */
export function processInbound(messageId: string, finalAttempt: boolean): Promise<InboundOutcome> {
  return runInboundTurn(chatappAdapter, chatappBook, messageId, finalAttempt);
}
