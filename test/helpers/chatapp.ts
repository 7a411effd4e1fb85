/** Helpers of the messaging-app tests: provider configuration, signed webhook calls. */
import { randomBytes, randomInt } from 'node:crypto';
import { twilioSignature } from '../../shared/clients/twilio.js';
import { twilioAccountSid, twilioAuthToken } from './channels.js';

export const testFromNumber = 'whatsapp:+14155238886';

/** Points the messaging app at a local Twilio: the tests' one Twilio account and its WhatsApp sender (call before the platform starts). */
export function configureChatapp(apiBaseUrl: string): void {
  process.env.TWILIO_ACCOUNT_SID = twilioAccountSid;
  process.env.TWILIO_AUTH_TOKEN = twilioAuthToken;
  process.env.TWILIO_API_BASE_URL = apiBaseUrl;
  process.env.CHATAPP_FROM_NUMBER = testFromNumber;
}

export const messageSid = () => 'SM' + randomBytes(16).toString('hex');
/** A fresh E.164 number per call (tests share nothing). */
export const freshPhone = () => `+1${2 + randomInt(8)}${String(randomInt(1e9)).padStart(9, '0')}`;

/** The parameters Twilio sends for an inbound WhatsApp text. */
export function whatsappParams(phone: string, body: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    SmsMessageSid: extra.MessageSid ?? messageSid(),
    NumMedia: '0',
    ProfileName: 'Test User',
    MessageType: 'text',
    SmsSid: 'SM' + '1'.repeat(32),
    WaId: phone.slice(1),
    SmsStatus: 'received',
    Body: body,
    To: testFromNumber,
    NumSegments: '1',
    ReferralNumMedia: '0',
    MessageSid: messageSid(),
    AccountSid: twilioAccountSid,
    From: `whatsapp:${phone}`,
    ApiVersion: '2010-04-01',
    ...extra,
  };
}

/** POSTs form parameters to the webhook, signed for `signedUrl` (unless a signature is given). */
export function postWebhook(
  baseUrl: string,
  params: Record<string, string>,
  options: { signature?: string | null; signedUrl?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const url = `${baseUrl}/chatapp/webhook`;
  const signature = options.signature === undefined ? twilioSignature(twilioAuthToken, options.signedUrl ?? url, params) : options.signature;
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded', ...options.headers };
  if (signature !== null) headers['X-Twilio-Signature'] = signature;
  return fetch(url, { method: 'POST', headers, body: new URLSearchParams(params).toString() });
}
