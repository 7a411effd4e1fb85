import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../../helpers/platform.js';
import { startLocalTwilio } from '../../helpers/local-twilio-server.js';
import { useLocalLlm } from '../../helpers/local-llm-server.js';
import { configureChatapp, freshPhone, postWebhook, whatsappParams } from '../../helpers/chatapp.js';
import { eventually } from '../../helpers/eventually.js';
import { createUser } from '../../../shared/users/users.store.js';
import { setConsent } from '../../../shared/users/consents.store.js';
import { OPT_IN_REPLY, OPT_OUT_REPLY, optKeyword } from '../../../shared/channels/chatapp/inbound.js';

const twilio = await startLocalTwilio();
configureChatapp(twilio.baseUrl);
const llm = await useLocalLlm(() => ({ content: 'agent reply' }));
afterAll(() => twilio.close());

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const repliesTo = (phone: string) => twilio.messages.filter((m) => m.params.To === `whatsapp:${phone}`).map((m) => m.params.Body);
const consent = async (userId: string) => (await api.request(`/api/users/${userId}/consents/chatapp`)).json();
const sendTemplate = (user_id: string) => api.request('/api/chatapp/send', { method: 'POST', json: { user_id, template_name: 'task_complete_confirm', variables: { task_name: 'x' } } });

describe('opt-out keywords', () => {
  it('recognises the provider\'s keywords alone in a message, any case, punctuation ignored', () => {
    expect(['STOP', ' stop ', 'Stop!', 'unsubscribe', 'QUIT.', 'StopAll'].map(optKeyword)).toEqual(Array(6).fill('out'));
    expect(['START', 'yes', 'Unstop'].map(optKeyword)).toEqual(['in', 'in', 'in']);
    expect(['stop it', 'please stop', 'started', '', null].map(optKeyword)).toEqual([null, null, null, null, null]);
  });

  it('STOP opts the user out (recorded), is confirmed as the provider does, reaches no agent; proactive sends are refused; START opts back in', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    await setConsent(u.user_id, 'chatapp', { opted_in: true, proactive_allowed: true, consent_source: 'web_form' });
    const callsBefore = llm.requests.length;
    expect((await postWebhook(api.url, whatsappParams(u.phone_number, 'Stop'))).status).toBe(200);
    await eventually(async () => repliesTo(u.phone_number).length === 1, 15_000, 'the confirmation');
    expect(repliesTo(u.phone_number)).toEqual([OPT_OUT_REPLY]);
    expect(await consent(u.user_id)).toMatchObject({ opted_in: false, proactive_allowed: false, consent_source: 'chatapp', opted_out_at: expect.any(String) });
    expect(llm.requests.length).toBe(callsBefore);
    const refused = await sendTemplate(u.user_id);
    expect(refused.status).toBe(403);
    expect((await refused.json()).missing_consent).toEqual(['opted_in', 'proactive_allowed']);

    await postWebhook(api.url, whatsappParams(u.phone_number, 'START'));
    await eventually(async () => repliesTo(u.phone_number).length === 2, 15_000, 'the opt-in confirmation');
    expect(repliesTo(u.phone_number)[1]).toBe(OPT_IN_REPLY);
    // Opted in again; proactive messages need their own permission again.
    expect(await consent(u.user_id)).toMatchObject({ opted_in: true, proactive_allowed: false, consent_source: 'chatapp' });
    expect((await (await sendTemplate(u.user_id)).json()).missing_consent).toEqual(['proactive_allowed']);

    // A sentence containing the word is an ordinary message for the agent.
    await postWebhook(api.url, whatsappParams(u.phone_number, 'please stop the meeting reminders'));
    await eventually(async () => repliesTo(u.phone_number).length === 3, 15_000, 'the agent reply');
    expect(repliesTo(u.phone_number)[2]).toBe('agent reply');
    expect((await consent(u.user_id)).opted_in).toBe(true);
  });
});
