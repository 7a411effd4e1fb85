/** Helpers of the channel tests: provider settings and requests signed the way each provider signs them. */
import { randomBytes } from 'node:crypto';
import { twilioSignature } from '../../shared/clients/twilio.js';

export const twilioAccountSid = 'AC' + 'b'.repeat(32);
export const twilioAuthToken = 'channels-auth-token';
export const smsNumber = '+14155550100';

/** Points the sms and voice channels at a local Twilio (call before the platform reads its configuration). */
export function configureTwilioChannels(apiBaseUrl: string): void {
  process.env.TWILIO_ACCOUNT_SID = twilioAccountSid;
  process.env.TWILIO_AUTH_TOKEN = twilioAuthToken;
  process.env.TWILIO_API_BASE_URL = apiBaseUrl;
  process.env.SMS_FROM_NUMBER = smsNumber;
}

export const twilioSid = (prefix: string) => prefix + randomBytes(16).toString('hex');

/** The parameters Twilio sends for an inbound SMS. */
export function smsParams(from: string, body: string, extra: Record<string, string> = {}): Record<string, string> {
  const sid = extra.MessageSid ?? twilioSid('SM');
  return {
    ToCountry: 'US', ToState: 'CA', SmsMessageSid: sid, NumMedia: '0', ToCity: 'SAN FRANCISCO', FromZip: '94105', SmsSid: sid, FromState: 'CA',
    SmsStatus: 'received', FromCity: 'SAN FRANCISCO', Body: body, FromCountry: 'US', To: smsNumber, ToZip: '94105', NumSegments: '1',
    MessageSid: sid, AccountSid: twilioAccountSid, From: from, ApiVersion: '2010-04-01',
    ...extra,
  };
}

/** POSTs form parameters to a Twilio webhook path, signed as Twilio signs them (unless a signature is given; null: none). */
export function postTwilio(baseUrl: string, path: string, params: Record<string, string>, signature?: string | null): Promise<Response> {
  const url = `${baseUrl}${path}`;
  const sig = signature === undefined ? twilioSignature(twilioAuthToken, url, params) : signature;
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
  if (sig !== null) headers['X-Twilio-Signature'] = sig;
  return fetch(url, { method: 'POST', headers, body: new URLSearchParams(params).toString() });
}
