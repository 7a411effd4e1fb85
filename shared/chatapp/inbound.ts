/**
 * Inbound messaging-app messages. The webhook only verifies the provider's signature, records the
 * message once per MessageSid and queues it; `processInbound` (the `chatapp.inbound` job) then runs
 * the spec's order: user by phone, window, session, agent, publish (channel chatapp, metadata
 * {message_sid, phone}), reply. Each step is safe to repeat when the job is retried.
 */
import { ValidationError, fieldErrors } from '../errors.js';
import { enqueue } from '../queues.js';
import { z } from '../zod.js';
import { logger } from '../logger.js';
import { runAgent } from '../agent/agent.js';
import { AGENT_FAILED_REPLY, agentTurnRefusal, sessionEvents } from '../agent/session-turn.js';
import { turnJournal } from '../agent/turn-steps.store.js';
import { findUserByPhone } from '../users/users.store.js';
import { setConsent } from '../sessions/consents.store.js';
import { resolveSession } from '../sessions/resolve.js';
import { startInteraction } from '../sessions/interactions.js';
import { listInteractions } from '../sessions/sessions.store.js';
import { acceptMessage } from '../stream/index.js';
import { getContext } from '../sessions/context.js';
import { getMessage, getReplyTo, insertInboundOnce, markProcessed, recordProviderStatus, type StoredMessage } from './messages.store.js';
import { extendWindow } from './window.store.js';
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

/** Sent to a number we do not know. */
export const UNKNOWN_NUMBER_REPLY =
  "Hello! We couldn't find an account linked to this number, so we can't help here yet. Please sign up or contact support to link your number.";
/**
 * Twilio's standard opt-out and opt-in keywords (a message that is exactly one of them, any case,
 * surrounding spaces and punctuation ignored), and the confirmations Twilio's own handling sends.
 * https://help.twilio.com/articles/223134027
 */
const optOutKeywords = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'OPTOUT', 'REVOKE']);
const optInKeywords = new Set(['START', 'YES', 'UNSTOP', 'OPTIN']);
export const OPT_OUT_REPLY = 'You have successfully been unsubscribed. You will not receive any more messages from this number. Reply START to resubscribe.';
export const OPT_IN_REPLY = 'You have successfully been re-subscribed to messages from this number. Reply HELP for help. Reply STOP to unsubscribe.';

/** `out` or `in` when the message is an opt-out or opt-in keyword, else null. */
export function optKeyword(body: string | null): 'out' | 'in' | null {
  const word = (body ?? '').trim().replace(/^[\s\p{P}]+|[\s\p{P}]+$/gu, '').toUpperCase();
  return optOutKeywords.has(word) ? 'out' : optInKeywords.has(word) ? 'in' : null;
}

/** Longest text the provider takes in one message body. */
const maxBodyChars = 1600;

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
  if (message.status === 'received') await enqueue('chatapp.inbound', { message_id: message.message_id });
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

/** The session's active chatapp interaction, or a new one for this phone number. */
async function chatappInteraction(sessionId: string, phone: string): Promise<string> {
  const open = (await listInteractions(sessionId)).filter((i) => i.channel === CHANNEL && i.status === 'active').at(-1);
  if (open) return open.interaction_id;
  return (await startInteraction(sessionId, { channel: CHANNEL, channel_ref: phone, metadata: { phone } })).interaction_id;
}

/**
 * Processes one recorded inbound message in the spec's order. `finalAttempt`: the agent's failure
 * is answered with an apology instead of being retried again.
 */
export async function processInbound(messageId: string, finalAttempt: boolean): Promise<{ outcome: 'processed' | 'unknown_number' | 'skipped' | 'opted_out' | 'opted_in'; reply?: string }> {
  const message = await getMessage(messageId);
  if (!message || message.direction !== 'inbound' || message.status !== 'received') return { outcome: 'skipped' };
  const phone = message.phone_number;
  const messageSid = message.provider_message_id!;

  // 1. The user by phone number; an unknown number gets a polite reply and the record says so.
  const user = await findUserByPhone(phone);
  if (!user) {
    await queueSend(await recordReply({ reply_to: message.message_id, phone_number: phone, body: UNKNOWN_NUMBER_REPLY, user_id: null, session_id: null }));
    await markProcessed(message.message_id, { user_id: null, session_id: null });
    logger('chatapp').info({ message_sid: messageSid }, 'inbound message from an unknown number');
    return { outcome: 'unknown_number', reply: UNKNOWN_NUMBER_REPLY };
  }
  // 2. The inbound message opens (extends) the 24-hour customer window.
  await extendWindow(user.user_id, phone);
  // An opt-out or opt-in keyword changes the chatapp consent (recorded with source chatapp) and is
  // confirmed as the provider would; it goes to no agent.
  const keyword = optKeyword(message.body);
  if (keyword) {
    await setConsent(user.user_id, CHANNEL, { opted_in: keyword === 'in', consent_source: 'chatapp' });
    const reply = keyword === 'out' ? OPT_OUT_REPLY : OPT_IN_REPLY;
    await queueSend((await getReplyTo(message.message_id)) ?? (await recordReply({ reply_to: message.message_id, phone_number: phone, body: reply, user_id: user.user_id, session_id: null })));
    await markProcessed(message.message_id, { user_id: user.user_id, session_id: null });
    logger('chatapp').info({ message_sid: messageSid, keyword }, 'opt-out keyword processed');
    return { outcome: keyword === 'out' ? 'opted_out' : 'opted_in', reply };
  }
  // 3. The user's session, and its chatapp interaction.
  const { session } = await resolveSession(user.user_id);
  const interactionId = await chatappInteraction(session.session_id, phone);
  // 4. The agent, with the session's history as its context. Its reply is recorded before anything
  //    is published, so a retried job publishes and sends that same reply instead of asking again.
  let recorded = await getReplyTo(message.message_id);
  if (!recorded) {
    const { conversation_history } = await getContext(session.session_id);
    let answer: string;
    try {
      const turn = {
        channel: CHANNEL,
        history: conversation_history,
        message: message.body!,
        caller: { kind: 'agent' as const, id: session.session_id, user_id: user.user_id },
        // A retried message replays the model answers and tool results it recorded (no tool runs twice).
        ...(await turnJournal(`chatapp:${message.message_id}`, session.session_id)),
      };
      answer = (await agentTurnRefusal(user.user_id)) ?? (await runAgent(turn, sessionEvents(session.session_id, CHANNEL, interactionId))).reply;
    } catch (err) {
      if (!finalAttempt) throw err;
      logger('chatapp').error({ err, message_sid: messageSid }, 'agent failed for good; answering with an apology');
      answer = AGENT_FAILED_REPLY;
    }
    recorded = await recordReply({ reply_to: message.message_id, phone_number: phone, body: answer.slice(0, maxBodyChars), user_id: user.user_id, session_id: session.session_id });
  }
  const reply = recorded.body!;
  // 5. Publish the user's message and the reply (idempotency keys: a retry publishes nothing twice).
  const metadata = { message_sid: messageSid, phone };
  await acceptMessage(session.session_id, { channel: CHANNEL, role: 'user', content: message.body!, interaction_id: interactionId, metadata }, { idempotencyKey: `chatapp:${messageSid}:user` });
  await acceptMessage(session.session_id, { channel: CHANNEL, role: 'assistant', content: reply, interaction_id: interactionId, metadata }, { idempotencyKey: `chatapp:${messageSid}:assistant` });
  // 6. Send the reply.
  await queueSend(recorded);
  await markProcessed(message.message_id, { user_id: user.user_id, session_id: session.session_id });
  return { outcome: 'processed', reply };
}
