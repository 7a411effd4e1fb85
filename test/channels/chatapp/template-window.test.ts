import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../../helpers/platform.js';
import { startLocalTwilio } from '../../helpers/local-twilio-server.js';
import { configureChatapp, freshPhone } from '../../helpers/chatapp.js';
import { eventually } from '../../helpers/eventually.js';
import { createUser } from '../../../shared/users/users.store.js';
import { setConsent } from '../../../shared/users/consents.store.js';
import { extendWindow } from '../../../shared/channels/chatapp/window.store.js';
import { insertOutbound } from '../../../shared/channels/chatapp/messages.store.js';
import { deliver } from '../../../shared/channels/chatapp/outbound.js';

const twilio = await startLocalTwilio();
configureChatapp(twilio.baseUrl);
// One template approved (Content SID), the others not.
process.env.CHATAPP_TEMPLATE_SIDS = 'task_reminder=HX0123456789abcdef0123456789abcdef';
afterAll(() => twilio.close());

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

async function consenting() {
  const u = await createUser({ phone_number: freshPhone() });
  await setConsent(u.user_id, 'chatapp', { opted_in: true, proactive_allowed: true, consent_source: 'web_form' });
  return u;
}
const send = (user_id: string, template_name: string, variables: Record<string, string>) => api.request('/api/chatapp/send', { method: 'POST', json: { user_id, template_name, variables } });

describe('templates outside the 24-hour window', () => {
  it('an approved template goes out by its Content SID outside the window', async () => {
    const u = await consenting();
    const res = await send(u.user_id, 'task_reminder', { task_name: 'Pay rent', due_time: '5pm' });
    expect(res.status).toBe(202);
    const sent = await eventually(async () => twilio.messages.find((m) => m.params.To === `whatsapp:${u.phone_number}`), 15_000, 'the send');
    expect(sent.params).toMatchObject({ ContentSid: 'HX0123456789abcdef0123456789abcdef', ContentVariables: JSON.stringify({ 1: 'Pay rent', 2: '5pm' }) });
    expect(sent.params.Body).toBeUndefined();
  });

  it('a template without an approved Content SID: 409 outside the window, sent as text inside it', async () => {
    const u = await consenting();
    const refused = await send(u.user_id, 'weekly_review', { completed_count: '3', highlights: 'x' });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ rule: 'approved_template_outside_window', missing_setting: 'CHATAPP_TEMPLATE_SIDS', template_name: 'weekly_review' });
    await extendWindow(u.user_id, u.phone_number);
    expect((await send(u.user_id, 'weekly_review', { completed_count: '3', highlights: 'x' })).status).toBe(202);
    const sent = await eventually(async () => twilio.messages.find((m) => m.params.To === `whatsapp:${u.phone_number}`), 15_000, 'the send');
    expect(sent.params.Body).toBe('Your week: 3 tasks completed. Highlights: x');
  });

  it('a queued template whose window closed before sending is failed by the send job, not sent as text', async () => {
    const u = await consenting();
    // Accepted while the window was open, then the window closed before the job ran.
    const queued = await insertOutbound({ user_id: u.user_id, phone_number: u.phone_number, kind: 'template', template_name: 'task_complete_confirm', variables: { task_name: 'x' }, body: 'Done: "x" is marked complete.' });
    await expect(deliver(queued.message_id, false)).rejects.toThrow(/approved Content SID/);
    const m = await (await api.request(`/api/chatapp/messages/${queued.message_id}`)).json();
    expect(m).toMatchObject({ status: 'failed', provider_message_id: null });
    expect(twilio.messages.filter((x) => x.params.To === `whatsapp:${u.phone_number}`)).toHaveLength(0);
  });
});
