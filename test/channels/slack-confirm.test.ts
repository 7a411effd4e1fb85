/**
 * Issue 39 point 8 in Slack: the assistant's question before a change comes as Block Kit, its plain
 * words and Confirm / Cancel buttons naming the confirmation. A press reaches POST /slack/interactions
 * (form-encoded `payload`, signed like events, the workspace checked); only the Slack user linked to
 * the person the question was asked of answers it. Confirm runs the tool, Cancel does not, an expired
 * question runs nothing; the answer is in the session's audit trail, the pressed message loses its
 * buttons (response_url) and the outcome is the reply in the thread. A typed yes keeps working.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { useLocalLlm } from '../helpers/local-llm-server.js';
import { startLocalSlack, type PostedMessage } from '../helpers/local-slack-server.js';
import { eventually } from '../helpers/eventually.js';
import { linkedSlackUser } from '../helpers/people.js';
import { configureSlack, postSlack, postSlackInteraction, slackBotToken, slackEvent } from '../helpers/channels.js';
import { resolveSession } from '../../shared/sessions/resolve.js';
import { listAudit } from '../../shared/sessions/events.store.js';
import { pendingConfirmation } from '../../shared/agent/confirmations.store.js';
import { db } from '../../shared/db/index.js';

const slack = await startLocalSlack(slackBotToken);
configureSlack(slack.apiUrl);
// A model that opens a case titled after "open a case: <title>", then says it asked.
await useLocalLlm((req) => {
  const message = [...req.body.messages].reverse().find((m) => m.role === 'user')!.content!;
  const title = /^open a case: (.+)$/.exec(message)?.[1];
  if (!title) return { content: `You said: ${message}` };
  if (req.body.messages.at(-1)!.role === 'tool') return { content: 'I asked you first.' };
  return { tool_calls: [{ id: 'c1', name: 'portal_open_case', arguments: JSON.stringify({ title, description: 'From Slack.' }) }] };
});
afterAll(() => slack.close());

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const cases = (title: string) => db()('portal_cases').where({ title }).select('title');
const answers = async (sessionId: string) =>
  (await listAudit(sessionId)).filter((r) => r.event_type === 'confirmation_answered').map((r) => r.payload as Record<string, unknown>);
const inThread = (message: PostedMessage, text: RegExp) => [...slack.posted, ...slack.ephemeral].find((m) => m.channel === message.channel && m.thread_ts === message.thread_ts && text.test(m.text));

/** The person asks the assistant to open a case (a DM, or a mention in a channel): the question it posts, and the pending confirmation. */
async function askedToOpen(title: string, how: 'im' | 'mention' = 'im') {
  const { user, slackId } = await linkedSlackUser();
  const event = how === 'im' ? slackEvent(slackId, `open a case: ${title}`) : slackEvent(slackId, `<@U0APP> open a case: ${title}`, {}, 'app_mention');
  expect((await postSlack(api.url, event)).status).toBe(200);
  const question = await eventually(async () => [...slack.posted, ...slack.ephemeral].find((m) => m.channel === event.event.channel && m.thread_ts === event.event.ts && m.blocks), 15_000, 'the question');
  const { session } = await resolveSession(user.user_id);
  const pending = (await pendingConfirmation(session.session_id))!;
  return { user, slackId, event, question, sessionId: session.session_id, pending };
}

describe('the question in Slack', () => {
  it('is Block Kit: the words, the question in plain words, Confirm and Cancel naming the confirmation; the text is the whole reply', async () => {
    const { question, pending } = await askedToOpen('Printer on fire');
    const asked = `Before I do this, please confirm: ${pending.summary}. Reply yes to go ahead, or no to cancel.`;
    expect(pending.summary).toMatch(/^portal_open_case \(.*\) with title "Printer on fire"/);
    expect(question.text).toBe(`I asked you first.\n\n${asked}`);
    expect(question.blocks).toEqual([
      { type: 'section', text: { type: 'mrkdwn', text: 'I asked you first.' } },
      { type: 'section', text: { type: 'plain_text', text: asked, emoji: false } },
      {
        type: 'actions',
        block_id: `confirmation:${pending.confirmation_id}`,
        elements: [
          { type: 'button', action_id: `confirm:${pending.confirmation_id}`, text: { type: 'plain_text', text: 'Confirm' }, style: 'primary', value: 'yes' },
          { type: 'button', action_id: `cancel:${pending.confirmation_id}`, text: { type: 'plain_text', text: 'Cancel' }, value: 'no' },
        ],
      },
    ]);
    expect(await cases('Printer on fire')).toEqual([]);
  });
});

describe('pressing a button', () => {
  it('Confirm: acknowledged at once, the case opened once, the answer audited, the buttons replaced, the outcome in the thread; a second press is a duplicate', async () => {
    const { slackId, question, pending, sessionId } = await askedToOpen('Printer still on fire');
    const confirm = slack.press(question, `confirm:${pending.confirmation_id}`, slackId);
    const cancel = slack.press(question, `cancel:${pending.confirmation_id}`, slackId);
    const started = Date.now();
    const res = await postSlackInteraction(api.url, confirm);
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(res.headers.get('x-channel-duplicate')).toBe('false');

    const done = await eventually(async () => inThread(question, /^Done: portal_open_case /), 15_000, 'the outcome in the thread');
    expect(done).toMatchObject({ channel: question.channel, thread_ts: question.thread_ts });
    expect(await cases('Printer still on fire')).toHaveLength(1);
    expect(await answers(sessionId)).toEqual([expect.objectContaining({ confirmation_id: pending.confirmation_id, answer: 'yes', outcome: 'done' })]);
    // The pressed message now holds its words and which button was pressed; no buttons.
    expect(slack.responses.map((r) => [r.message.ts, r.body.replace_original])).toEqual([[question.ts, true]]);
    expect(question.blocks!.map((b) => b.type)).toEqual(['section', 'section', 'context']);
    expect(question.blocks!.at(-1)).toEqual({ type: 'context', elements: [{ type: 'mrkdwn', text: 'You pressed *Confirm*.' }] });

    // Cancel pressed afterwards (a second device still showing the buttons): one answer per question.
    const again = await postSlackInteraction(api.url, cancel);
    expect([again.status, again.headers.get('x-channel-duplicate')]).toEqual([200, 'true']);
    expect(await cases('Printer still on fire')).toHaveLength(1);
  });

  it('Cancel: nothing is opened, the answer is audited, the buttons replaced', async () => {
    const { slackId, question, pending, sessionId } = await askedToOpen('Coffee machine empty');
    expect((await postSlackInteraction(api.url, slack.press(question, `cancel:${pending.confirmation_id}`, slackId))).status).toBe(200);
    await eventually(async () => inThread(question, /^Cancelled: nothing was changed/), 15_000, 'the outcome in the thread');
    expect(await cases('Coffee machine empty')).toEqual([]);
    expect(await answers(sessionId)).toEqual([expect.objectContaining({ answer: 'no', outcome: 'cancelled' })]);
    expect(question.blocks!.at(-1)).toEqual({ type: 'context', elements: [{ type: 'mrkdwn', text: 'You pressed *Cancel*.' }] });
  });

  it('by anyone but the person asked (another linked user, an unlinked one): 403, nothing recorded, the question stays; their typed yes still answers it', async () => {
    const { slackId, event, question, pending } = await askedToOpen('Door left open');
    const other = await linkedSlackUser();
    for (const presser of [other.slackId, 'U0NOBODY']) {
      const res = await postSlackInteraction(api.url, slack.press(question, `confirm:${pending.confirmation_id}`, presser));
      expect(res.status).toBe(403);
      expect((await res.json()).detail).toMatch(/Only the person the question was asked of/);
    }
    expect(await db()('channel_messages').where({ channel: 'slack', provider_message_id: `confirmation:${pending.confirmation_id}` })).toEqual([]);
    expect(await pendingConfirmation(pending.session_id)).toMatchObject({ confirmation_id: pending.confirmation_id });
    expect(await cases('Door left open')).toEqual([]);

    // The text reply keeps working: "yes" in the same thread.
    expect((await postSlack(api.url, slackEvent(slackId, 'yes', { channel: event.event.channel, thread_ts: event.event.ts }))).status).toBe(200);
    await eventually(async () => inThread(question, /^Done: portal_open_case /), 15_000, 'the outcome of the typed yes');
    expect(await cases('Door left open')).toHaveLength(1);
  });

  it('on a question older than CONFIRMATION_TTL_SECONDS: nothing runs, the person is told it expired', async () => {
    const { slackId, question, pending, sessionId } = await askedToOpen('Stale request');
    await db()('tool_confirmations').where({ confirmation_id: pending.confirmation_id }).update({ created_at: db().raw("now() - interval '20 minutes'") });
    expect((await postSlackInteraction(api.url, slack.press(question, `confirm:${pending.confirmation_id}`, slackId))).status).toBe(200);
    const told = await eventually(async () => inThread(question, /^That question has expired/), 15_000, 'the expiry notice');
    expect(told.text).toMatch(/Ask me again if you still want it\.$/);
    expect(await cases('Stale request')).toEqual([]);
    expect(await answers(sessionId)).toEqual([expect.objectContaining({ answer: 'yes', outcome: 'expired' })]);
  });

  it('after a mention in a shared channel: the question is ephemeral, and so are the replaced message and the outcome', async () => {
    const { slackId, question, pending } = await askedToOpen('Projector broken', 'mention');
    expect(slack.ephemeral).toContain(question);
    expect((await postSlackInteraction(api.url, slack.press(question, `confirm:${pending.confirmation_id}`, slackId))).status).toBe(200);
    const done = await eventually(async () => slack.ephemeral.find((m) => m.channel === 'C0GENERAL' && m.user === slackId && /^Done: portal_open_case .*Projector broken/.test(m.text)), 15_000, 'the ephemeral outcome');
    expect(done.thread_ts).toBe(question.thread_ts);
    expect(slack.posted.some((m) => m.text.includes('Projector broken'))).toBe(false);
    // Slack sends no message with a press on an ephemeral one: the replacement is the question alone.
    expect(question.blocks).toEqual([
      { type: 'section', text: { type: 'plain_text', text: expect.stringContaining('Projector broken'), emoji: false } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: 'You pressed *Confirm*.' }] },
    ]);
  });
});

describe('POST /slack/interactions refuses', () => {
  it('a missing signature (400), a wrong or stale one (403), another workspace (403), a payload that is not JSON (400); nothing is recorded', async () => {
    const { slackId, question, pending } = await askedToOpen('Refused presses');
    const press = slack.press(question, `confirm:${pending.confirmation_id}`, slackId);
    const missing = await postSlackInteraction(api.url, press, { signature: null });
    expect(missing.status).toBe(400);
    expect((await missing.json()).errors).toEqual([{ path: 'headers.x-slack-signature', message: 'required' }]);
    expect((await postSlackInteraction(api.url, press, { signature: 'v0=' + '0'.repeat(64) })).status).toBe(403);
    expect((await postSlackInteraction(api.url, press, { timestamp: Math.floor(Date.now() / 1000) - 301 })).status).toBe(403);
    const elsewhere = await postSlackInteraction(api.url, { ...press, team: { id: 'T0OTHER', domain: 'other' }, user: { ...press.user, team_id: 'T0OTHER' } });
    expect(elsewhere.status).toBe(403);
    expect((await elsewhere.json()).detail).toMatch(/workspace/);
    const garbled = await postSlackInteraction(api.url, 'not-json');
    expect(garbled.status).toBe(400);
    expect((await garbled.json()).errors).toEqual([{ path: 'body.payload', message: 'must be JSON' }]);
    expect(await db()('channel_messages').where({ channel: 'slack', provider_message_id: `confirmation:${pending.confirmation_id}` })).toEqual([]);
    expect(await pendingConfirmation(pending.session_id)).toMatchObject({ confirmation_id: pending.confirmation_id });
  });
});
