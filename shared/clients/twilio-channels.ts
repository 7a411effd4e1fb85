/**
 * Twilio for the sms and voice channels, through the official `twilio` package: SMS by the Messages
 * REST API, TwiML for calls, and the X-Twilio-Signature check of webhooks and of the ConversationRelay
 * socket. TWILIO_API_BASE_URL points the REST API at another base URL (tests run a local server).
 */
import type twilioPackage from 'twilio';
import { config } from '../config.js';
import { loadOnFirstUse } from '../load-on-first-use.js';

const twilio = loadOnFirstUse<typeof twilioPackage>('twilio');

/** The twilio package (TwiML builders, validateRequest). */
export const twilioLib = () => twilio();

export interface SmsReceipt {
  sid: string;
  status: string;
}

let rest: twilioPackage.Twilio | undefined;

function restClient(): twilioPackage.Twilio {
  if (!rest) {
    const { accountSid, authToken, apiBaseUrl, timeoutMs } = config().channels.twilio;
    const client = twilio()(accountSid, authToken, { timeout: timeoutMs });
    // Each twilio-node domain joins its baseUrl with the resource path at request time.
    if (apiBaseUrl) client.api.baseUrl = apiBaseUrl;
    rest = client;
  }
  return rest;
}

/** Sends one SMS (POST /2010-04-01/Accounts/{sid}/Messages.json); `from` is a number or a Messaging Service SID (MG…). */
export async function sendSms(message: { from: string; to: string; body: string }): Promise<SmsReceipt> {
  const sender = message.from.startsWith('MG') ? { messagingServiceSid: message.from } : { from: message.from };
  const created = await restClient().messages.create({ ...sender, to: message.to, body: message.body });
  return { sid: created.sid, status: created.status };
}

/**
 * SMS to `to` created since `since` with this body, newest first (GET …/Messages.json?To=…): how a
 * retried send finds a message the provider accepted although its answer was lost.
 */
export async function findSentSms(to: string, since: Date, body: string): Promise<SmsReceipt[]> {
  const recent = await restClient().messages.list({ to, pageSize: 50, limit: 50 });
  return recent.filter((m) => m.dateCreated && m.dateCreated.getTime() >= since.getTime() && m.body === body).map((m) => ({ sid: m.sid, status: m.status }));
}

/** True for provider failures worth retrying: rate limits, server errors, network faults. */
export function isTransientTwilioError(err: unknown): boolean {
  const lib = twilio.ifLoaded();
  if (lib && err instanceof lib.RestException) return err.status === 429 || err.status >= 500;
  return true;
}

/** A readable description of a provider failure. */
export function describeTwilioError(err: unknown): string {
  const lib = twilio.ifLoaded();
  if (lib && err instanceof lib.RestException) return `provider ${err.status}${err.code ? ` (code ${err.code})` : ''}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** Checks X-Twilio-Signature with the official validator (HMAC-SHA1 of the URL and the sorted form parameters). */
export function validTwilioRequest(signature: string, url: string, params: Record<string, string>): boolean {
  return twilio().validateRequest(config().channels.twilio.authToken, signature, url, params);
}

/** Forgets the cached client (tests change the configuration between files). */
export function resetTwilioChannels(): void {
  rest = undefined;
}
