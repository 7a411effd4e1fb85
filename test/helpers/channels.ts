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

export const slackSigningSecret = '8f742231b10e8888abcd99yyyzzz85a5';
export const slackBotToken = 'xoxb-test-bot-token';

/** Points the slack channel at a local Web API (call before the platform reads its configuration). */
export function configureSlack(apiUrl: string): void {
  process.env.SLACK_SIGNING_SECRET = slackSigningSecret;
  process.env.SLACK_BOT_TOKEN = slackBotToken;
  process.env.SLACK_API_URL = apiUrl;
  process.env.SLACK_TEAM_IDS = slackTeamId;
}

/** The workspace the tests' Slack app serves (SLACK_TEAM_IDS). */
export const slackTeamId = 'T0TEAM';

/** Links a Slack user of the test workspace to a platform user, as the person's confirmation does. */
export async function linkSlackUser(slackUserId: string, userId: string, teamId = slackTeamId): Promise<void> {
  const { db } = await import('../../shared/db/index.js');
  await db()('slack_links').insert({ team_id: teamId, slack_user_id: slackUserId, user_id: userId });
}

let eventCounter = 0;
/** An Events API envelope as Slack sends it for a direct message to the app (or a mention with `type: 'app_mention'`). */
export function slackEvent(user: string, text: string, extra: Record<string, unknown> = {}, eventType: 'message' | 'app_mention' = 'message') {
  eventCounter++;
  const ts = `${1_700_000_000 + eventCounter}.${String(eventCounter).padStart(6, '0')}`;
  return {
    token: 'deprecated-verification-token',
    team_id: 'T0TEAM',
    api_app_id: 'A0APP',
    event: {
      type: eventType,
      user,
      text,
      ts,
      channel: eventType === 'message' ? `D0${user}` : 'C0GENERAL',
      event_ts: ts,
      channel_type: eventType === 'message' ? 'im' : 'channel',
      ...extra,
    },
    type: 'event_callback',
    event_id: `Ev0${randomBytes(5).toString('hex').toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ team_id: 'T0TEAM', user_id: 'U0APP', is_bot: true }],
  };
}

type SlackPostOptions = { timestamp?: number; signature?: string | null; headers?: Record<string, string> };

/** POSTs a raw body to a Slack request URL, signed as Slack signs it (v0, HMAC-SHA256) at `timestamp` (default now), unless a signature is given (null: none). */
async function postSigned(url: string, raw: string, contentType: string, options: SlackPostOptions): Promise<Response> {
  const { slackSignature } = await import('../../shared/channels/slack/signature.js');
  const ts = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = { 'Content-Type': contentType, 'X-Slack-Request-Timestamp': ts, ...options.headers };
  const sig = options.signature === undefined ? slackSignature(slackSigningSecret, ts, raw) : options.signature;
  if (sig !== null) headers['X-Slack-Signature'] = sig;
  return fetch(url, { method: 'POST', headers, body: raw });
}

/** POSTs a JSON body to /slack/events signed as Slack signs it. */
export function postSlack(baseUrl: string, body: unknown, options: SlackPostOptions = {}): Promise<Response> {
  return postSigned(`${baseUrl}/slack/events`, JSON.stringify(body), 'application/json', options);
}

/** POSTs an interaction payload to /slack/interactions as Slack does: form-encoded `payload=<JSON>` (a string: sent as it is), signed. */
export function postSlackInteraction(baseUrl: string, payload: unknown, options: SlackPostOptions = {}): Promise<Response> {
  const field = typeof payload === 'string' ? payload : JSON.stringify(payload);
  return postSigned(`${baseUrl}/slack/interactions`, new URLSearchParams({ payload: field }).toString(), 'application/x-www-form-urlencoded', options);
}

/** The parameters Twilio sends to /voice/incoming for a call from `from`. */
export const callParams = (from: string, callSid = twilioSid('CA'), extra: Record<string, string> = {}) => ({
  AccountSid: twilioAccountSid, ApiVersion: '2010-04-01', CallSid: callSid, CallStatus: 'ringing', Called: smsNumber, Caller: from,
  Direction: 'inbound', From: from, FromCountry: 'US', To: smsNumber, ToCountry: 'US', ...extra,
});

/** The relay URL (with its token) of the TwiML /voice/incoming answered; throws when it answered no relay. */
export function relayUrlOf(twiml: string): string {
  const url = /<ConversationRelay url="([^"]+)"/.exec(twiml)?.[1];
  if (!url) throw new Error(`no ConversationRelay in ${twiml}`);
  return url.replaceAll('&amp;', '&');
}

/**
 * A call as Twilio places it: the signed /voice/incoming, then the relay socket on the URL it answered
 * (with the call's token), signed over that URL; `setup()` names the same call by default.
 */
export async function placeCall(baseUrl: string, from: string, options: { callSid?: string; params?: Record<string, string> } = {}) {
  const callSid = options.callSid ?? twilioSid('CA');
  const res = await postTwilio(baseUrl, '/voice/incoming', callParams(from, callSid, options.params));
  if (res.status !== 200) throw new Error(`/voice/incoming answered ${res.status}`);
  const url = relayUrlOf(await res.text());
  const relay = await connectRelay(baseUrl, { url, defaults: { callSid, from } });
  return { ...relay, callSid, url };
}

/** A client speaking ConversationRelay's side of the socket, as Twilio does (signed upgrade, JSON text frames). */
export async function connectRelay(baseUrl: string, options: { signature?: string | null; url?: string; defaults?: { callSid: string; from: string }; headers?: Record<string, string> } = {}) {
  const { WebSocket } = await import('ws');
  const url = options.url ?? `${baseUrl.replace(/^http/, 'ws')}/voice/relay`;
  const sig = options.signature === undefined ? twilioSignature(twilioAuthToken, url, {}) : options.signature;
  const ws = new WebSocket(url, { headers: { ...options.headers, ...(sig === null ? {} : { 'X-Twilio-Signature': sig }) } });
  const received: Array<Record<string, any>> = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (data) => {
    received.push(JSON.parse(data.toString()));
    waiters.splice(0).forEach((w) => w());
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let read = 0;
  /** The next reply: text tokens up to the one with last: true, joined. */
  const nextReply = async (ms = 15_000): Promise<{ text: string; tokens: string[] }> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const end = received.findIndex((m, i) => i >= read && m.type === 'text' && m.last === true);
      if (end >= 0) {
        const tokens = received.slice(read, end + 1).filter((m) => m.type === 'text').map((m) => m.token as string);
        read = end + 1;
        return { text: tokens.join(''), tokens };
      }
      if (Date.now() > deadline) throw new Error(`no complete reply within ${ms} ms; received ${JSON.stringify(received.slice(read))}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 100);
      });
    }
  };
  return {
    ws,
    received,
    nextReply,
    send: (message: Record<string, unknown>) => ws.send(JSON.stringify(message)),
    /** Twilio's setup message for a call from `from`. */
    setup: (callSid = options.defaults?.callSid ?? '', from = options.defaults?.from ?? '') =>
      ws.send(JSON.stringify({ type: 'setup', sessionId: 'VX' + randomBytes(16).toString('hex'), accountSid: twilioAccountSid, parentCallSid: '', callSid, from, to: smsNumber, forwardedFrom: '', callType: 'PSTN', callerName: '', direction: 'inbound', callStatus: 'RINGING', customParameters: {} })),
    say: (text: string) => ws.send(JSON.stringify({ type: 'prompt', voicePrompt: text, lang: 'en-US', last: true })),
    hangUp: () => new Promise<void>((r) => {
      ws.once('close', () => r());
      ws.close();
    }),
  };
}
