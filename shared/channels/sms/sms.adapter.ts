/**
 * The sms channel (Twilio Messaging): users by phone number, carrier keywords (STOP, START, HELP and
 * their usual synonyms) set and clear the `sms` consent, replies go out from the number written to.
 */
import { config } from '../../config.js';
import { z } from '../../zod.js';
import { findUserByPhone } from '../../users/users.store.js';
import { getConsent, setConsent } from '../../users/consents.store.js';
import { describeProviderError, findSentSms, isTransientProviderError, sendSms } from '../../clients/twilio.js';
import { PermanentSendError, type ChannelAdapter } from '../contract.js';

export const SMS = 'sms';

/** What Twilio sends for an inbound SMS (form-encoded); other parameters are kept and signed over, but ignored. */
export const smsParamsSchema = z
  .object({
    MessageSid: z.string().min(1).max(64),
    AccountSid: z.string().max(64).optional(),
    From: z.string().regex(/^\+[1-9]\d{1,14}$/, 'must be an E.164 number'),
    To: z.string().min(1).max(64),
    Body: z.string().max(1600).default(''),
    NumMedia: z.coerce.number().int().min(0).default(0),
  })
  .catchall(z.string())
  .openapi('SmsInbound', { description: 'Twilio Messaging webhook parameters (MessageSid, From, To, Body, NumMedia, MediaUrl0…; others tolerated).' });
export type SmsParams = z.output<typeof smsParamsSchema>;

/**
 * Carrier keywords as Twilio's default opt-out handling reads them: a message that is exactly one of
 * them (any case, surrounding spaces and punctuation ignored). https://help.twilio.com/articles/223134027
 */
const optOut = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'OPTOUT', 'REVOKE']);
const optIn = new Set(['START', 'YES', 'UNSTOP', 'OPTIN']);
const help = new Set(['HELP', 'INFO']);

export const SMS_OPT_OUT_REPLY = 'You have successfully been unsubscribed. You will not receive any more messages from this number. Reply START to resubscribe.';
export const SMS_OPT_IN_REPLY = 'You have successfully been re-subscribed to messages from this number. Reply HELP for help. Reply STOP to unsubscribe.';
export const SMS_HELP_REPLY = 'switchboard assistant: reply to this number to talk to your assistant. Reply STOP to unsubscribe, START to resubscribe.';
export const SMS_UNKNOWN_SENDER_REPLY = "Hello! We couldn't find an account linked to this number, so we can't help here yet. Please sign up or contact support to link your number.";

/** `out`, `in` or `help` when the text is a carrier keyword, else null. */
export function smsKeyword(body: string | null): 'out' | 'in' | 'help' | null {
  const word = (body ?? '').trim().replace(/^[\s\p{P}]+|[\s\p{P}]+$/gu, '').toUpperCase();
  return optOut.has(word) ? 'out' : optIn.has(word) ? 'in' : help.has(word) ? 'help' : null;
}

/** The text of an inbound SMS for the conversation: its body and any media links. */
export function smsText(params: SmsParams): string {
  const media = Array.from({ length: params.NumMedia }, (_, i) => params[`MediaUrl${i}`]).filter(Boolean);
  const note = media.length ? `[${media.length} attachment${media.length > 1 ? 's' : ''}: ${media.join(' ')}]` : '';
  return [params.Body, note].filter(Boolean).join('\n');
}

/** Settings the sms channel needs. */
export function smsMissingSettings(): string[] {
  const { twilio, sms } = config().channels;
  return [
    !twilio.accountSid && 'TWILIO_ACCOUNT_SID',
    !twilio.authToken && 'TWILIO_AUTH_TOKEN',
    !sms.from && 'SMS_FROM_NUMBER',
  ].filter((s): s is string => Boolean(s));
}

export const smsAdapter: ChannelAdapter = {
  channel: SMS,
  missingSettings: smsMissingSettings,
  findUser: (message) => findUserByPhone(message.remote_address),
  unknownSenderReply: SMS_UNKNOWN_SENDER_REPLY,
  interactionRef: (message) => message.remote_address,
  publishMetadata: (message) => ({ message_sid: message.provider_message_id, phone: message.remote_address }),

  async intercept(message, user) {
    const keyword = smsKeyword(message.body);
    if (!keyword) return undefined;
    if (keyword === 'help') return { outcome: 'help', reply: SMS_HELP_REPLY };
    // Recorded as the consent of the sms channel type, source sms_reply (spec 000's value).
    await setConsent(user.user_id, SMS, { opted_in: keyword === 'in', consent_source: 'sms_reply' });
    return keyword === 'out' ? { outcome: 'opted_out', reply: SMS_OPT_OUT_REPLY } : { outcome: 'opted_in', reply: SMS_OPT_IN_REPLY };
  },

  // After STOP the carrier refuses messages to the number (Twilio error 21610): a reply is recorded, not sent.
  async mayReply(user) {
    const consent = await getConsent(user.user_id, SMS);
    return !(consent.consent_id && !consent.opted_in);
  },

  reply: (inbound, body) => ({ channel: SMS, remote_address: inbound.remote_address, local_address: inbound.local_address, body }),
  maxReplyChars: 1600,

  async send(message) {
    const from = message.local_address ?? config().channels.sms.from;
    if (!from) throw new PermanentSendError('No number to send from: set SMS_FROM_NUMBER.');
    try {
      const receipt = await sendSms({ from, to: message.remote_address, body: message.body ?? '' });
      return { provider_message_id: receipt.sid, metadata: { provider_status: receipt.status } };
    } catch (err) {
      if (!isTransientProviderError(err)) throw new PermanentSendError(describeProviderError(err));
      throw new Error(describeProviderError(err), { cause: err });
    }
  },

  async findSent(message, exclude) {
    // The provider's clock may be somewhat behind ours.
    const since = new Date(message.send_started_at!.getTime() - 2 * 60_000);
    const found = await findSentSms(message.remote_address, since, message.body ?? '');
    const taken = await exclude(found.map((f) => f.sid));
    const first = found.filter((f) => !taken.has(f.sid)).at(-1);
    return first && { provider_message_id: first.sid, metadata: { provider_status: first.status } };
  },
};
