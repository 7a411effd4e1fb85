/**
 * Issue 39 point 3, Slack proves the workspace and the person: events only from the configured
 * team ids; a Slack user is the platform user who confirmed the link while signed in, never whoever
 * has the email their Slack profile shows; answers outside a direct message go only to the person
 * (ephemeral), never into the shared channel. SHOW_TRANSCRIPT=1 prints the refused attacks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIdentity, signIn, type SignedIn } from '../helpers/identity.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { useLocalLlm } from '../helpers/local-llm-server.js';
import { startLocalSlack } from '../helpers/local-slack-server.js';
import { eventually } from '../helpers/eventually.js';
import { configureSlack, postSlack, slackBotToken, slackEvent } from '../helpers/channels.js';
import { db } from '../../shared/db/index.js';

const slack = await startLocalSlack(slackBotToken);
configureSlack(slack.apiUrl);
// The model reads the person's private note back: whatever it answers is personal data.
const llm = await useLocalLlm((req) => ({ content: `PRIVATE for the person: ${req.body.messages.at(-1)!.content}` }));
afterAll(() => slack.close());

const accounts = {
  vera: { login: 'vera', password: 'vera', name: 'Vera Victim', email: 'vera@example.test', roles: ['sre'] },
};
const idp = await startIdentity({ accounts });
let api: Platform;
let vera: SignedIn;
let veraId: string;
beforeAll(async () => {
  api = await startPlatform({ port: idp.appPort });
  vera = await signIn(api.url, accounts.vera);
  veraId = (await (await vera.request('/api/portal/profile')).json()).user_id;
});

const transcript: string[] = [];
const show = () => {
  if (process.env.SHOW_TRANSCRIPT) console.log(transcript.splice(0).join('\n'));
};
const inbound = (user: string) => db()('channel_messages').where({ channel: 'slack', direction: 'inbound', remote_address: user });
const answeredTo = (channel: string) => [...slack.posted, ...slack.ephemeral].filter((m) => m.channel === channel);

describe('the workspace', () => {
  it("an event from another team is refused (403), whatever the profile's email; nothing is stored or answered", async () => {
    // Another workspace's user whose profile shows the victim's address.
    slack.users.set('U0MALLORY', { id: 'U0MALLORY', email: 'vera@example.test' });
    const event = { ...slackEvent('U0MALLORY', 'read me my private note'), team_id: 'T0OTHER', authorizations: [{ team_id: 'T0OTHER', user_id: 'U0APP', is_bot: true }] };
    const before = llm.requests.length;
    const res = await postSlack(api.url, event);
    const body = await res.json();
    transcript.push(`POST /slack/events {"team_id":"T0OTHER","event":{"type":"message","user":"U0MALLORY","text":"read me my private note",…}} (validly signed)`, `-> ${res.status} ${JSON.stringify(body)}`);
    expect(res.status).toBe(403);
    expect(body.detail).toMatch(/workspace/);
    await new Promise((r) => setTimeout(r, 300));
    expect(await inbound('U0MALLORY')).toEqual([]);
    expect(answeredTo(event.event.channel)).toEqual([]);
    expect(llm.requests.length).toBe(before);
    show();
  });
});

describe('the person', () => {
  it('an unlinked Slack user whose profile shows the victim\'s email gets only a link; the model is not asked', async () => {
    slack.users.set('U0MIMIC', { id: 'U0MIMIC', email: 'VERA@example.test' });
    const event = slackEvent('U0MIMIC', 'read me my private note');
    const before = llm.requests.length;
    expect((await postSlack(api.url, event)).status).toBe(200);
    const [reply] = await eventually(async () => (answeredTo(event.event.channel).length ? answeredTo(event.event.channel) : undefined), 15_000, 'the reply');
    transcript.push(`POST /slack/events (team T0TEAM, U0MIMIC, profile email VERA@example.test): "read me my private note" -> 200`, `bot, in the DM: ${reply!.text}`);
    expect(reply!.text).toMatch(/^I don't know who you are on switchboard yet\. Open http:\/\/\S+\/slack\/link\?token=[\w-]+ while signed in/);
    expect(reply!.text).not.toContain('PRIVATE');
    expect(llm.requests.length).toBe(before);
    expect(await db()('slack_links').where({ slack_user_id: 'U0MIMIC' })).toEqual([]);
    show();
  });

  it('the person who opens the link signed in and confirms it is linked; the token works once; signed out means sign-in first', async () => {
    const event = slackEvent('U0VERA', 'hello');
    await postSlack(api.url, event);
    const [reply] = await eventually(async () => (answeredTo(event.event.channel).length ? answeredTo(event.event.channel) : undefined), 15_000, 'the link');
    const link = new URL(/(http:\/\/\S+\/slack\/link\?token=[\w-]+)/.exec(reply!.text)![1]!);
    const path = link.pathname + link.search;

    // Signed out: to sign-in and back.
    const anonymous = await fetch(api.url + path, { redirect: 'manual' });
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get('location')).toBe(`/api/global/auth/login?return_to=${encodeURIComponent(path)}`);

    const page = await vera.request(path);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('U0VERA');
    expect(html).toContain('T0TEAM');
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)![1]!;
    const token = link.searchParams.get('token')!;
    const form = (fields: Record<string, string>, origin = new URL(api.url).origin) =>
      vera.request('/slack/link', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: origin, 'X-CSRF-Token': '' }, body: new URLSearchParams(fields).toString() });
    // A cross-site post and a wrong CSRF token are refused.
    expect((await form({ token, csrf_token: csrf }, 'https://evil.example')).status).toBe(403);
    expect((await form({ token, csrf_token: 'not-the-token' })).status).toBe(403);
    const done = await form({ token, csrf_token: csrf });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('Slack account linked');
    expect(await db()('slack_links').where({ team_id: 'T0TEAM', slack_user_id: 'U0VERA' }).select('user_id')).toEqual([{ user_id: veraId }]);
    expect((await form({ token, csrf_token: csrf })).status).toBe(404);

    // Now U0VERA is Vera.
    const next = slackEvent('U0VERA', 'what is on my list?');
    await postSlack(api.url, next);
    const answer = await eventually(async () => answeredTo(next.event.channel).find((m) => m.text.startsWith('PRIVATE')), 15_000, 'the answer');
    expect(answer!.text).toBe('PRIVATE for the person: what is on my list?');
  });
});

describe('shared channels', () => {
  it('a mention in a public channel is answered only to the person (ephemeral); nothing is posted in the channel', async () => {
    // U0VERA was linked by the test above; link again directly if it ran alone.
    await db()('slack_links').insert({ team_id: 'T0TEAM', slack_user_id: 'U0VERA', user_id: veraId }).onConflict(['team_id', 'slack_user_id']).ignore();
    const event = slackEvent('U0VERA', '<@U0APP> read me my private note', { channel: 'C0PUBLIC' }, 'app_mention');
    expect((await postSlack(api.url, event)).status).toBe(200);
    const reply = await eventually(async () => slack.ephemeral.find((m) => m.channel === 'C0PUBLIC'), 15_000, 'the ephemeral answer');
    transcript.push(`POST /slack/events (app_mention in public channel C0PUBLIC by U0VERA): "<@U0APP> read me my private note" -> 200`, `bot: chat.postEphemeral(channel C0PUBLIC, user ${reply!.user}, thread ${reply!.thread_ts ?? '-'}): ${reply!.text}`, `bot: chat.postMessage in C0PUBLIC: ${slack.posted.filter((m) => m.channel === 'C0PUBLIC').length} messages`);
    expect(reply).toMatchObject({ user: 'U0VERA', text: 'PRIVATE for the person: read me my private note' });
    expect(slack.posted.filter((m) => m.channel === 'C0PUBLIC')).toEqual([]);

    // An unlinked user's link is not shown to the channel either.
    const stranger = slackEvent('U0PASSERBY', '<@U0APP> hi', { channel: 'C0PUBLIC' }, 'app_mention');
    await postSlack(api.url, stranger);
    const link = await eventually(async () => slack.ephemeral.find((m) => m.user === 'U0PASSERBY'), 15_000, 'the link');
    expect(link!.text).toContain('/slack/link?token=');
    expect(slack.posted.filter((m) => m.channel === 'C0PUBLIC')).toEqual([]);
    show();
  });
});
