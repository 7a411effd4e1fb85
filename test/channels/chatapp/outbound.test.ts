import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../../helpers/platform.js';
import { startLocalTwilio } from '../../helpers/local-twilio-server.js';
import { eventually } from '../../helpers/eventually.js';
import { configureChatapp, freshPhone, testFromNumber } from '../../helpers/chatapp.js';
import { twilioAccountSid } from '../../helpers/channels.js';
import { createUser } from '../../../shared/users/users.store.js';
import { setConsent } from '../../../shared/users/consents.store.js';
import { extendWindow } from '../../../shared/channels/chatapp/window.store.js';
import { db } from '../../../shared/db/index.js';
import type { ChatappMessage } from '../../../shared/channels/chatapp/chatapp.schemas.js';

const twilio = await startLocalTwilio();
configureChatapp(twilio.baseUrl);
afterAll(() => twilio.close());

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

/** A user with a consent; `inWindow`: they wrote recently, so templates without an approved SID may go out as text. */
async function user(consent?: { opted_in: boolean; proactive_allowed?: boolean }, inWindow = false) {
  const u = await createUser({ phone_number: freshPhone(), display_name: 'Ada' });
  if (consent) await setConsent(u.user_id, 'chatapp', { ...consent, consent_source: 'web_form' });
  if (inWindow) await extendWindow(u.user_id, u.phone_number);
  return u;
}

const post = (path: string, json: unknown) => api.request(path, { method: 'POST', json });
const readMessage = async (id: string) => (await (await api.request(`/api/chatapp/messages/${id}`)).json()) as ChatappMessage;
const settled = (id: string) => eventually(async () => {
  const m = await readMessage(id);
  return m.status !== 'queued' && m.status !== 'sending' && m;
}, 15_000, `message ${id} to settle`);
const sentTo = (phone: string) => twilio.messages.filter((m) => m.params.To === `whatsapp:${phone}`);

describe('proactive templates (POST /api/chatapp/send)', () => {
  it('an unknown template is a 400 naming template_name', async () => {
    const u = await user({ opted_in: true, proactive_allowed: true });
    const res = await post('/api/chatapp/send', { user_id: u.user_id, template_name: 'birthday', variables: {} });
    expect(res.status).toBe(400);
    expect((await res.json()).errors).toEqual([expect.objectContaining({ path: 'body.template_name' })]);
  });

  it('a missing, empty or unknown variable is a 400 naming each', async () => {
    const u = await user({ opted_in: true, proactive_allowed: true });
    const res = await post('/api/chatapp/send', { user_id: u.user_id, template_name: 'calendar_reminder', variables: { event_name: 'Standup', time: ' ', room: '4' } });
    expect(res.status).toBe(400);
    const paths = ((await res.json()).errors as Array<{ path: string }>).map((e) => e.path).sort();
    expect(paths).toEqual(['body.variables.location', 'body.variables.room', 'body.variables.time']);
    expect(await db()('chatapp_messages').where({ user_id: u.user_id })).toHaveLength(0);
  });

  it.each([
    ['task_reminder', { task_name: 'Pay rent', due_time: '5pm' }, 'Reminder: "Pay rent" is due 5pm.'],
    ['daily_briefing', { date: 'Monday', task_count: '3', top_tasks: 'rent, gym' }, 'Your briefing for Monday: 3 tasks. Top tasks: rent, gym'],
    ['calendar_reminder', { event_name: 'Standup', time: '9:00', location: 'Room 4' }, 'Coming up: Standup at 9:00, Room 4.'],
    ['task_complete_confirm', { task_name: 'Pay rent' }, 'Done: "Pay rent" is marked complete.'],
    ['weekly_review', { completed_count: '12', highlights: 'shipped v2' }, 'Your week: 12 tasks completed. Highlights: shipped v2'],
  ])('template %s with its exact variables is sent, recorded and readable back', async (template_name, variables, text) => {
    const u = await user({ opted_in: true, proactive_allowed: true }, true);
    const res = await post('/api/chatapp/send', { user_id: u.user_id, template_name, variables });
    expect(res.status).toBe(202);
    const queued = (await res.json()) as ChatappMessage;
    expect(queued).toMatchObject({ direction: 'outbound', kind: 'template', template_name, variables, status: 'queued', phone_number: u.phone_number });
    const done = await settled(queued.message_id);
    const [delivered] = sentTo(u.phone_number);
    expect(done).toMatchObject({ status: 'sent', provider_message_id: delivered!.sid, provider_status: 'queued', error: null, attempts: 1 });
    expect(delivered!.accountSid).toBe(twilioAccountSid);
    expect(delivered!.params).toEqual({ From: testFromNumber, To: `whatsapp:${u.phone_number}`, Body: text });
  });

  it('outside the 24-hour window a template without an approved Content SID is a 409 naming the rule and the missing setting', async () => {
    const u = await user({ opted_in: true, proactive_allowed: true });
    const res = await post('/api/chatapp/send', { user_id: u.user_id, template_name: 'task_complete_confirm', variables: { task_name: 'x' } });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ rule: 'approved_template_outside_window', missing_setting: 'CHATAPP_TEMPLATE_SIDS', template_name: 'task_complete_confirm' });
    expect(await db()('chatapp_messages').where({ user_id: u.user_id })).toHaveLength(0);
  });

  it('without consent the send is a 403 naming the missing consent, and nothing is recorded or sent', async () => {
    const none = await user();
    const optedInOnly = await user({ opted_in: true });
    const send = (user_id: string) => post('/api/chatapp/send', { user_id, template_name: 'task_complete_confirm', variables: { task_name: 'x' } });

    const refused = await send(none.user_id);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const problem = await refused.json();
    expect(problem.missing_consent).toEqual(['opted_in', 'proactive_allowed']);
    expect(problem.detail).toMatch(/opted_in, proactive_allowed/);

    const partly = await send(optedInOnly.user_id);
    expect(partly.status).toBe(403);
    expect((await partly.json()).missing_consent).toEqual(['proactive_allowed']);

    expect(await db()('chatapp_messages').whereIn('user_id', [none.user_id, optedInOnly.user_id])).toHaveLength(0);
    expect([...sentTo(none.phone_number), ...sentTo(optedInOnly.phone_number)]).toHaveLength(0);
  });

  it('an unknown user is a 404', async () => {
    const res = await post('/api/chatapp/send', { user_id: '00000000-0000-4000-8000-000000000000', template_name: 'task_complete_confirm', variables: { task_name: 'x' } });
    expect(res.status).toBe(404);
  });

  it('a provider refusal marks the message failed with the error, without retries', async () => {
    const u = await user({ opted_in: true, proactive_allowed: true }, true);
    twilio.failNext({ status: 400, code: 63016, message: 'Failed to send freeform message because you are outside the allowed window.' });
    const queued = (await (await post('/api/chatapp/send', { user_id: u.user_id, template_name: 'task_complete_confirm', variables: { task_name: 'x' } })).json()) as ChatappMessage;
    const done = await settled(queued.message_id);
    expect(done).toMatchObject({ status: 'failed', provider_message_id: null, attempts: 1 });
    expect(done.error).toMatch(/provider 400 \(code 63016\)/);
  });

  it('a transient provider failure is retried by the queue and the message is sent', async () => {
    const u = await user({ opted_in: true, proactive_allowed: true }, true);
    twilio.failNext({ status: 503, code: 20503, message: 'Service unavailable' });
    const queued = (await (await post('/api/chatapp/send', { user_id: u.user_id, template_name: 'task_complete_confirm', variables: { task_name: 'x' } })).json()) as ChatappMessage;
    const done = await settled(queued.message_id);
    expect(done).toMatchObject({ status: 'sent', attempts: 2, error: null });
    expect(sentTo(u.phone_number)).toHaveLength(1);
  });
});

describe('free-form messages and the 24-hour customer window (POST /api/chatapp/messages)', () => {
  it('free text outside the window is a 409 naming the rule', async () => {
    const u = await user({ opted_in: true });
    const res = await post('/api/chatapp/messages', { user_id: u.user_id, text: 'hello' });
    expect(res.status).toBe(409);
    const problem = await res.json();
    expect(problem.rule).toBe('customer_window_24h');
    expect(problem.detail).toMatch(/24-hour customer window/);
    expect(await db()('chatapp_messages').where({ user_id: u.user_id })).toHaveLength(0);
  });

  it('free text inside the window is sent', async () => {
    const u = await user();
    await extendWindow(u.user_id, u.phone_number);
    const res = await post('/api/chatapp/messages', { user_id: u.user_id, text: 'hello inside' });
    expect(res.status).toBe(202);
    const done = await settled(((await res.json()) as ChatappMessage).message_id);
    expect(done.status).toBe('sent');
    expect(sentTo(u.phone_number)[0]!.params.Body).toBe('hello inside');
  });

  it('the window closes 24 hours after the latest inbound message', async () => {
    const u = await user();
    const window = await extendWindow(u.user_id, u.phone_number);
    const hours = (window.window_expires_at.getTime() - window.last_inbound_at.getTime()) / 3_600_000;
    expect(hours).toBe(24);
    await db()('chatapp_sessions').where({ phone_number: u.phone_number }).update({ window_expires_at: db().raw(`now() - interval '1 second'`) });
    expect((await post('/api/chatapp/messages', { user_id: u.user_id, text: 'too late' })).status).toBe(409);
  });

  it('more than 3 buttons or more than 10 list entries is a 400 before anything is sent', async () => {
    const u = await user();
    await extendWindow(u.user_id, u.phone_number);
    const buttons = ['a', 'b', 'c', 'd'].map((id) => ({ id, title: id.toUpperCase() }));
    const tooMany = await post('/api/chatapp/messages', { user_id: u.user_id, text: 'pick', buttons });
    expect(tooMany.status).toBe(400);
    expect((await tooMany.json()).errors).toEqual([expect.objectContaining({ path: 'body.buttons', message: expect.stringMatching(/at most 3 buttons/) })]);
    const items = Array.from({ length: 11 }, (_, i) => ({ id: `i${i}`, item: `Item ${i}` }));
    const longList = await post('/api/chatapp/messages', { user_id: u.user_id, text: 'choose', list: { button: 'Options', items } });
    expect(longList.status).toBe(400);
    expect((await longList.json()).errors).toEqual([expect.objectContaining({ path: 'body.list.items' })]);
    expect(await db()('chatapp_messages').where({ user_id: u.user_id })).toHaveLength(0);
    expect(twilio.contents.filter((c) => JSON.stringify(c.body).includes('"d"'))).toHaveLength(0);
  });

  it('3 buttons and 10 list entries are sent as Twilio content', async () => {
    const u = await user();
    await extendWindow(u.user_id, u.phone_number);
    const buttons = ['yes', 'no', 'later'].map((id) => ({ id, title: id }));
    const b = (await (await post('/api/chatapp/messages', { user_id: u.user_id, text: 'Confirm?', buttons })).json()) as ChatappMessage;
    const items = Array.from({ length: 10 }, (_, i) => ({ id: `slot${i}`, item: `Slot ${i}` }));
    const l = (await (await post('/api/chatapp/messages', { user_id: u.user_id, text: 'Choose a slot', list: { button: 'Slots', items } })).json()) as ChatappMessage;
    expect([(await settled(b.message_id)).status, (await settled(l.message_id)).status]).toEqual(['sent', 'sent']);
    const quickReply = twilio.contents.find((c) => (c.body.types as Record<string, { body: string }>)['twilio/quick-reply']?.body === 'Confirm?');
    const listPicker = twilio.contents.find((c) => (c.body.types as Record<string, { body: string }>)['twilio/list-picker']?.body === 'Choose a slot');
    expect(quickReply).toBeDefined();
    expect((listPicker!.body.types as Record<string, { items: unknown[] }>)['twilio/list-picker']!.items).toHaveLength(10);
    expect(sentTo(u.phone_number).map((m) => m.params.ContentSid).sort()).toEqual([quickReply!.sid, listPicker!.sid].sort());
  });

  it('messages are listed back per user', async () => {
    const u = await user();
    await extendWindow(u.user_id, u.phone_number);
    await post('/api/chatapp/messages', { user_id: u.user_id, text: 'one' });
    await post('/api/chatapp/messages', { user_id: u.user_id, text: 'two' });
    const res = await api.request(`/api/chatapp/messages?user_id=${u.user_id}`);
    expect(res.status).toBe(200);
    expect(((await res.json()).messages as ChatappMessage[]).map((m) => m.body)).toEqual(['two', 'one']);
    expect((await api.request('/api/chatapp/messages')).status).toBe(400);
  });
});
