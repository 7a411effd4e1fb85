/**
 * Twilio, the provider of the messaging app (WhatsApp), the sms channel and the voice channel,
 * through the official `twilio` package: messages by the REST API (Messages, and Content for rich
 * messages), TwiML for calls, and the X-Twilio-Signature algorithm (shared/channels/twilio-signature.ts
 * applies it). One account serves all three (TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN), through one REST
 * client; TWILIO_API_BASE_URL points it at another base URL (tests run local servers that speak the same API).
 */
import { createHash } from 'node:crypto';
import type twilioPackage from 'twilio';
import { config } from '../config.js';
import { ServiceUnavailableError } from '../errors.js';
import { loadOnFirstUse } from '../load-on-first-use.js';

/** twilio costs an API process ~6 MB of heap (~20 MB RSS with what it pulls in): loaded when a message is sent or a webhook checked. */
const twilio = loadOnFirstUse<typeof twilioPackage>('twilio');

/** A message as the Messages API takes it: free text, or a Content SID with its variables. */
export interface ProviderMessage {
  /** Recipient, `whatsapp:+E164`. */
  to: string;
  body?: string;
  contentSid?: string;
  contentVariables?: Record<string, string>;
  /** URL the provider calls with delivery status changes (sent, delivered, read, failed…). */
  statusCallback?: string;
}

export interface ProviderReceipt {
  /** Provider message id (SM…/MM…). */
  sid: string;
  /** Provider status at acceptance (queued, accepted, sent…). */
  status: string;
}

/** A rich message: text with quick-reply buttons, or a list picker. */
export type RichContent =
  | { kind: 'buttons'; body: string; buttons: Array<{ id: string; title: string }> }
  | { kind: 'list'; body: string; button: string; items: Array<{ id: string; item: string; description?: string }> };

export class ChatappClient {
  /** Content SIDs of rich messages created by this process, by content hash (one Content resource per distinct message). */
  private readonly contents = new Map<string, string>();

  constructor(
    private readonly client: twilioPackage.Twilio,
    private readonly from: string,
  ) {}

  /** Sends one message by POST /2010-04-01/Accounts/{sid}/Messages.json. */
  async send(message: ProviderMessage): Promise<ProviderReceipt> {
    const created = await this.client.messages.create({
      from: this.from,
      to: message.to,
      ...(message.body !== undefined ? { body: message.body } : {}),
      ...(message.contentSid ? { contentSid: message.contentSid } : {}),
      ...(message.contentVariables ? { contentVariables: JSON.stringify(message.contentVariables) } : {}),
      ...(message.statusCallback ? { statusCallback: message.statusCallback } : {}),
    });
    return { sid: created.sid, status: created.status };
  }

  /**
   * Messages from our number to `to` created at or after `since`, newest first, optionally only those
   * whose body is `body` (GET /2010-04-01/Accounts/{sid}/Messages.json?To=…&From=…): how a retried send
   * finds a message the provider accepted although its answer was lost (the Messages API takes no
   * idempotency key). Not filtered by DateSent: a message the provider still holds (queued) has no
   * date_sent yet, and the filter only has day resolution anyway.
   */
  async findSent(to: string, since: Date, body?: string): Promise<ProviderReceipt[]> {
    const recent = await this.client.messages.list({ to, from: this.from, pageSize: 50, limit: 50 });
    return recent
      .filter((m) => m.dateCreated && m.dateCreated.getTime() >= since.getTime() && (body === undefined || m.body === body))
      .map((m) => ({ sid: m.sid, status: m.status }));
  }

  /**
   * The Content SID of a rich message, created by POST /v1/Content (twilio/quick-reply or
   * twilio/list-picker) on first use. Session messages of these types need no WhatsApp approval.
   */
  async richContentSid(content: RichContent): Promise<string> {
    const types =
      content.kind === 'buttons'
        ? { 'twilio/quick-reply': { body: content.body, actions: content.buttons.map((b) => ({ id: b.id, title: b.title })) } }
        : { 'twilio/list-picker': { body: content.body, button: content.button, items: content.items } };
    const key = createHash('sha256').update(JSON.stringify(types)).digest('hex').slice(0, 32);
    const known = this.contents.get(key);
    if (known) return known;
    // twilio-node sends this object as the JSON body unchanged, so it takes the wire spelling (friendly_name, twilio/quick-reply).
    const request = { friendly_name: `switchboard_${key}`, language: 'en', types };
    const created = await this.client.content.v1.contents.create(request as unknown as Parameters<typeof this.client.content.v1.contents.create>[0]);
    this.contents.set(key, created.sid);
    return created.sid;
  }
}

let rest: twilioPackage.Twilio | undefined;

/** The one REST client of the account (TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN). */
function restClient(): twilioPackage.Twilio {
  if (!rest) {
    const { accountSid, authToken, apiBaseUrl, timeoutMs } = config().channels.twilio;
    const client = twilio()(accountSid, authToken, { timeout: timeoutMs });
    if (apiBaseUrl) {
      // Each twilio-node domain joins its baseUrl with the resource path at request time.
      client.api.baseUrl = apiBaseUrl;
      client.content.baseUrl = apiBaseUrl;
    }
    rest = client;
  }
  return rest;
}

let instance: ChatappClient | undefined;

/** The messaging app's sender on the account; 503 when the account or the sender number is not configured. */
export function chatappClient(): ChatappClient {
  if (!instance) {
    const { accountSid, authToken } = config().channels.twilio;
    const { fromNumber } = config().chatapp;
    if (!accountSid || !authToken || !fromNumber) {
      throw new ServiceUnavailableError('The messaging-app provider is not configured: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and CHATAPP_FROM_NUMBER.');
    }
    instance = new ChatappClient(restClient(), fromNumber);
  }
  return instance;
}

/** Forgets the cached clients (tests change the configuration between files). */
export function resetTwilioClients(): void {
  rest = undefined;
  instance = undefined;
}

/** The twilio package (TwiML builders). */
export const twilioLib = () => twilio();

// --- the sms channel ----------------------------------------------------------------

export interface SmsReceipt {
  sid: string;
  status: string;
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

// --- every use ---------------------------------------------------------------------

/** True for provider failures worth retrying: rate limits, server errors and network faults; false for rejected requests. */
export function isTransientProviderError(err: unknown): boolean {
  const lib = twilio.ifLoaded();
  if (lib && err instanceof lib.RestException) return err.status === 429 || err.status >= 500;
  return true;
}

/** A readable description of a provider failure, for the message record. */
export function describeProviderError(err: unknown): string {
  const lib = twilio.ifLoaded();
  if (lib && err instanceof lib.RestException) return `provider ${err.status}${err.code ? ` (code ${err.code})` : ''}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Checks X-Twilio-Signature (HMAC-SHA1 of the URL and the sorted form parameters, keyed by the auth
 * token) with the official validator, which also tries the URL with and without its default port.
 */
export function validTwilioSignature(authToken: string, signature: string, url: string, params: Record<string, string>): boolean {
  return twilio().validateRequest(authToken, signature, url, params);
}

/** The signature of a request as the provider computes it (tests and local tooling sign with it). */
export function twilioSignature(authToken: string, url: string, params: Record<string, string>): string {
  return twilio().getExpectedTwilioSignature(authToken, url, params);
}
