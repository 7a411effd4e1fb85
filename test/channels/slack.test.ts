/**
 * The slack channel: Events API requests signed the way Slack signs them, the Slack user linked to
 * a platform user by a confirmed link (see test/security/slack-workspace-person.test.ts), replies posted in the thread by chat.postMessage
 * on a local server speaking the Web API; one message stored and answered once whatever Slack's
 * retries or the send job's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { useLocalLlm } from '../helpers/local-llm-server.js';
import { startLocalSlack } from '../helpers/local-slack-server.js';
import { subscribe } from '../helpers/sse.js';
import { eventually } from '../helpers/eventually.js';
import { linkedSlackUser } from '../helpers/people.js';
import { configureSlack, postSlack, slackBotToken, slackEvent } from '../helpers/channels.js';
import { resolveSession } from '../../shared/sessions/resolve.js';
import { verifySlackRequest } from '../../shared/channels/slack/signature.js';
import { db } from '../../shared/db/index.js';

const slack = await startLocalSlack(slackBotToken);
configureSlack(slack.apiUrl);
process.env.CHATAPP_TIMEOUT_MS = '400';
await useLocalLlm((req) => ({ content: `Slack answer to: ${req.body.messages.at(-1)!.content}` }));
afterAll(() => slack.close());

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const postedIn = (channel: string) => slack.posted.filter((m) => m.channel === channel);
const inboundRows = (key: string) => db()('channel_messages').where({ channel: 'slack', direction: 'inbound', provider_message_id: key });

describe("Slack's request signing", () => {
  it("matches the example of Slack's documentation", () => {
    const body = 'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    const headers = { timestamp: '1531420618', signature: 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503' };
    expect(() => verifySlackRequest('8f742231b10e8888abcd99yyyzzz85a5', headers, body, 1531420618 + 60)).not.toThrow();
    expect(() => verifySlackRequest('8f742231b10e8888abcd99yyyzzz85a5', headers, body + 'x', 1531420618)).toThrow(/does not match/);
  });

  it('POST /slack/events refuses a missing signature (400), a wrong one and a timestamp past 5 minutes (403); nothing is stored', async () => {
    const { slackId } = await linkedSlackUser();
    const event = slackEvent(slackId, 'hello');
    const key = `${event.event.channel}:${event.event.ts}`;
    const missing = await postSlack(api.url, event, { signature: null });
    expect(missing.status).toBe(400);
    expect((await missing.json()).errors).toEqual([{ path: 'headers.x-slack-signature', message: 'required' }]);
    expect((await postSlack(api.url, event, { signature: 'v0=' + '0'.repeat(64) })).status).toBe(403);
    const stale = await postSlack(api.url, event, { timestamp: Math.floor(Date.now() / 1000) - 301 });
    expect(stale.status).toBe(403);
    expect((await stale.json()).detail).toMatch(/five minutes/);
    expect(await inboundRows(key)).toHaveLength(0);
  });

  it('answers url_verification with its challenge', async () => {
    const res = await postSlack(api.url, { token: 'x', challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P', type: 'url_verification' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
  });
});

describe('a direct message to the app', () => {
  it('is acknowledged at once, published on channel slack, and answered in its thread with chat.postMessage', async () => {
    const { user, slackId } = await linkedSlackUser();
    const { session } = await resolveSession(user.user_id);
    const web = subscribe(api.url, session.session_id, 'chat');
    await web.opened;
    try {
      const event = slackEvent(slackId, 'Where is my order?');
      const started = Date.now();
      const res = await postSlack(api.url, event);
      expect(res.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(3000);
      const joined = await web.next((e) => e.event_type === 'CHANNEL_JOINED');
      expect(joined).toMatchObject({ channel: 'slack', data: { channel_ref: event.event.channel } });
      const userMessage = await web.next((e) => e.event_type === 'MESSAGE' && e.data.role === 'user');
      const metadata = { event_id: event.event_id, slack_user: slackId, slack_channel: event.event.channel, thread_ts: event.event.ts };
      expect(userMessage).toMatchObject({ channel: 'slack', data: { content: 'Where is my order?', metadata } });
      const reply = await eventually(async () => postedIn(event.event.channel)[0], 15_000, 'the reply in Slack');
      expect(reply).toMatchObject({ token: slackBotToken, text: 'Slack answer to: Where is my order?', thread_ts: event.event.ts });
      // Found by the confirmed link: the Slack profile (users.info) is not asked.
      expect(slack.calls.find((c) => c.method === 'users.info')).toBeUndefined();
    } finally {
      web.close();
    }
  });

  it('a mention in a channel is answered in the thread it was written in, only to the person (ephemeral), without the mention in the text', async () => {
    const { slackId } = await linkedSlackUser();
    const event = slackEvent(slackId, '<@U0APP> summarise the thread', { thread_ts: '1699999999.000100' }, 'app_mention');
    expect((await postSlack(api.url, event)).status).toBe(200);
    const reply = await eventually(async () => slack.ephemeral.find((m) => m.text === 'Slack answer to: summarise the thread'), 15_000, 'the reply');
    expect(reply).toMatchObject({ channel: 'C0GENERAL', user: slackId, thread_ts: '1699999999.000100' });
    expect(slack.posted.some((m) => m.text === 'Slack answer to: summarise the thread')).toBe(false);
  });

  it('from a Slack user linked to no platform user is answered with a link to confirm, in the thread', async () => {
    const event = slackEvent('U0STRANGER', 'hi');
    await postSlack(api.url, event);
    const reply = await eventually(async () => postedIn(event.event.channel)[0], 15_000, 'the reply');
    expect(reply.text).toMatch(/^I don't know who you are on switchboard yet\. Open http:\/\/\S+\/slack\/link\?token=[\w-]+ while signed in/);
  });

  it('retried by Slack (same event_id, X-Slack-Retry-Num) is stored once and answered once', async () => {
    const { slackId } = await linkedSlackUser();
    const event = slackEvent(slackId, 'once please');
    const first = await postSlack(api.url, event);
    const retry = await postSlack(api.url, event, { headers: { 'X-Slack-Retry-Num': '1', 'X-Slack-Retry-Reason': 'http_timeout' } });
    expect([first.status, retry.status]).toEqual([200, 200]);
    expect(retry.headers.get('x-channel-duplicate')).toBe('true');
    await eventually(async () => postedIn(event.event.channel)[0], 15_000, 'the reply');
    // A marker in the same conversation, queued after the retry: its reply follows any wrong second one.
    await postSlack(api.url, { ...slackEvent(slackId, 'marker'), event: { ...slackEvent(slackId, 'marker').event, channel: event.event.channel } });
    await eventually(async () => postedIn(event.event.channel).length >= 2, 15_000, 'the marker reply');
    expect(postedIn(event.event.channel).map((m) => m.text)).toEqual(['Slack answer to: once please', 'Slack answer to: marker']);
    expect(await inboundRows(`${event.event.channel}:${event.event.ts}`)).toHaveLength(1);
  });

  it("ignores bot messages (our own replies included) and edits", async () => {
    const { slackId } = await linkedSlackUser();
    const bot = slackEvent(slackId, 'Slack answer to: x', { bot_id: 'B0BOT' });
    const edit = slackEvent(slackId, 'edited', { subtype: 'message_changed' });
    expect((await postSlack(api.url, bot)).status).toBe(200);
    expect((await postSlack(api.url, edit)).status).toBe(200);
    expect(await inboundRows(`${bot.event.channel}:${bot.event.ts}`)).toHaveLength(0);
    expect(await inboundRows(`${edit.event.channel}:${edit.event.ts}`)).toHaveLength(0);
  });
});

describe('the reply is posted exactly once', () => {
  it('a rate-limited post is retried by the queue and posted once', async () => {
    const { slackId } = await linkedSlackUser();
    slack.failNext({ http: 429 });
    const event = slackEvent(slackId, 'busy day');
    await postSlack(api.url, event);
    const reply = await eventually(async () => postedIn(event.event.channel)[0], 20_000, 'the reply after the retry');
    expect(reply.text).toBe('Slack answer to: busy day');
    const row = await eventually(async () => {
      const r = await db()('channel_messages').where({ channel: 'slack', direction: 'outbound', local_address: event.event.channel }).first();
      return r?.status === 'sent' && r;
    });
    expect(row).toMatchObject({ provider_message_id: reply.ts, attempts: 2 });
    expect(postedIn(event.event.channel)).toHaveLength(1);
  });

  it('a post whose answer was lost is found in the thread on retry and adopted, not posted again', async () => {
    const { slackId } = await linkedSlackUser();
    slack.delayNext(1500);
    const event = slackEvent(slackId, 'slow network');
    await postSlack(api.url, event);
    const row = await eventually(async () => {
      const r = await db()('channel_messages').where({ channel: 'slack', direction: 'outbound', local_address: event.event.channel }).first();
      return r?.status === 'sent' && r;
    }, 20_000, 'the reply recorded as sent');
    expect(postedIn(event.event.channel)).toHaveLength(1);
    expect(row.provider_message_id).toBe(postedIn(event.event.channel)[0]!.ts);
  });
});
