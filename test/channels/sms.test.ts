/**
 * The sms channel through the channel contract: Twilio's signed webhook in its real form encoding,
 * the reply sent by the local Twilio REST server as an SMS from the number written to, carrier
 * keywords recorded as consent, proactive templates under consent, and each message stored and
 * answered once whatever the retries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { startLocalTwilio } from '../helpers/local-twilio-server.js';
import { useLocalLlm } from '../helpers/local-llm-server.js';
import { subscribe } from '../helpers/sse.js';
import { eventually } from '../helpers/eventually.js';
import { freshPhone } from '../helpers/chatapp.js';
import { configureTwilioChannels, postTwilio, smsNumber, smsParams, twilioSid } from '../helpers/channels.js';
import { createUser } from '../../shared/users/users.store.js';
import { getConsent, setConsent } from '../../shared/users/consents.store.js';
import { resolveSession } from '../../shared/sessions/resolve.js';
import { getContext } from '../../shared/sessions/context.js';
import { listInteractions } from '../../shared/sessions/sessions.store.js';
import { processInbound, deliver } from '../../shared/channels/pipeline.js';
import { SMS_OPT_IN_REPLY, SMS_OPT_OUT_REPLY, SMS_UNKNOWN_SENDER_REPLY } from '../../shared/channels/sms/sms.adapter.js';
import { db } from '../../shared/db/index.js';

const twilio = await startLocalTwilio();
configureTwilioChannels(twilio.baseUrl);
const llm = await useLocalLlm((req) => ({ content: `You said: ${req.body.messages.at(-1)!.content}` }));
afterAll(() => twilio.close());

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const sentTo = (phone: string) => twilio.messages.filter((m) => m.params.To === phone);
const rows = (sid: string) => db()('channel_messages').where({ channel: 'sms', direction: 'inbound', provider_message_id: sid });
const post = (params: Record<string, string>, signature?: string | null) => postTwilio(api.url, '/sms/webhook', params, signature);

describe('POST /sms/webhook signature', () => {
  it('without X-Twilio-Signature is a 400, with a wrong one a 403; nothing is stored', async () => {
    const params = smsParams(freshPhone(), 'hi');
    const missing = await post(params, null);
    expect(missing.status).toBe(400);
    expect((await missing.json()).errors).toEqual([expect.objectContaining({ path: 'headers.x-twilio-signature' })]);
    expect((await post(params, 'bm90IGEgc2lnbmF0dXJl')).status).toBe(403);
    // Signed over other parameters than those sent (a tampered body).
    const { twilioSignature } = await import('../../shared/clients/twilio.js');
    const forged = twilioSignature('channels-auth-token', `${api.url}/sms/webhook`, params);
    expect((await post({ ...params, Body: 'send me money' }, forged)).status).toBe(403);
    expect(await rows(params.MessageSid!)).toHaveLength(0);
  });

  it('a signed request with a malformed From is a 400 naming it', async () => {
    const res = await post(smsParams('12', 'hi'));
    expect(res.status).toBe(400);
    expect((await res.json()).errors.map((e: { path: string }) => e.path)).toEqual(['body.From']);
  });
});

describe('an inbound SMS', () => {
  it('is answered by SMS from the number written to, published on channel sms with message_sid and phone, in one sms interaction', async () => {
    const u = await createUser({ phone_number: freshPhone(), display_name: 'Ada' });
    const { session } = await resolveSession(u.user_id);
    const web = subscribe(api.url, session.session_id, 'chat');
    await web.opened;
    try {
      const params = smsParams(u.phone_number, 'What is on today?');
      const res = await post(params);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('<Response></Response>');
      const joined = await web.next((e) => e.event_type === 'CHANNEL_JOINED');
      const user = await web.next((e) => e.event_type === 'MESSAGE' && e.data.role === 'user');
      const assistant = await web.next((e) => e.event_type === 'MESSAGE' && e.data.role === 'assistant');
      const metadata = { message_sid: params.MessageSid, phone: u.phone_number };
      expect(joined).toMatchObject({ channel: 'sms', data: { channel_ref: u.phone_number } });
      expect(user).toMatchObject({ channel: 'sms', data: { content: 'What is on today?', metadata, interaction_id: joined.data.interaction_id } });
      expect(assistant).toMatchObject({ channel: 'sms', data: { content: 'You said: What is on today?', metadata } });

      const reply = await eventually(async () => sentTo(u.phone_number)[0], 15_000, 'the SMS reply');
      expect(reply.params).toMatchObject({ From: smsNumber, Body: 'You said: What is on today?' });
      expect(reply.auth).toEqual({ user: 'AC' + 'b'.repeat(32), password: 'channels-auth-token' });

      // A second SMS goes to the same interaction.
      await post(smsParams(u.phone_number, 'And tomorrow?'));
      await eventually(async () => sentTo(u.phone_number).length === 2, 15_000, 'the second reply');
      const interactions = (await listInteractions(session.session_id)).filter((i) => i.channel === 'sms');
      expect(interactions).toHaveLength(1);
      expect(interactions[0]).toMatchObject({ status: 'active', channel_ref: u.phone_number });
    } finally {
      web.close();
    }
  });

  it('from an unknown number is told so, recorded, and nothing else happens', async () => {
    const phone = freshPhone();
    const params = smsParams(phone, 'who is this?');
    expect((await post(params)).status).toBe(200);
    const reply = await eventually(async () => sentTo(phone)[0], 15_000, 'the polite reply');
    expect(reply.params.Body).toBe(SMS_UNKNOWN_SENDER_REPLY);
    expect((await rows(params.MessageSid!))[0]).toMatchObject({ status: 'processed', user_id: null, session_id: null });
  });

  it('repeated with the same MessageSid is stored once and answered once', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const params = smsParams(u.phone_number, 'only once');
    const [a, b] = await Promise.all([post(params), post(params)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    await eventually(async () => sentTo(u.phone_number)[0], 15_000, 'the reply');
    const again = await post(params);
    expect(again.headers.get('x-channel-duplicate')).toBe('true');
    // A marker from the same number, queued after the repeats: its reply comes after any wrong second one.
    await post(smsParams(u.phone_number, 'marker'));
    await eventually(async () => sentTo(u.phone_number).length >= 2, 15_000, 'the marker reply');
    expect(await rows(params.MessageSid!)).toHaveLength(1);
    expect(sentTo(u.phone_number).map((m) => m.params.Body)).toEqual(['You said: only once', 'You said: marker']);
  });

  it('a retried processing job publishes and sends the first reply once, without asking the model again', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const { insertInboundOnce } = await import('../../shared/channels/messages.store.js');
    const { message } = await insertInboundOnce({ channel: 'sms', provider_message_id: twilioSid('SM'), remote_address: u.phone_number, local_address: smsNumber, body: 'retry me', payload: {} });
    const asked = llm.requests.length;
    expect(await processInbound(message.message_id, false)).toEqual({ outcome: 'processed', reply: 'You said: retry me' });
    // The job ran again (its completion was lost): the message was processed, nothing is repeated.
    await db()('channel_messages').where({ message_id: message.message_id }).update({ status: 'received' });
    expect(await processInbound(message.message_id, false)).toEqual({ outcome: 'processed', reply: 'You said: retry me' });
    expect(llm.requests.length).toBe(asked + 1);
    const reply = await db()('channel_messages').where({ reply_to: message.message_id }).first();
    await eventually(async () => (await db()('channel_messages').where({ message_id: reply.message_id }).first()).status === 'sent', 15_000, 'the reply sent');
    // The send job itself retried after success: not sent again.
    await deliver(reply.message_id, false);
    expect(sentTo(u.phone_number)).toHaveLength(1);
    const { session } = await resolveSession(u.user_id);
    const history = await eventually(async () => {
      const h = (await getContext(session.session_id)).conversation_history;
      return h.length === 2 && h;
    });
    expect(history.map((m) => [m.channel, m.role, m.content])).toEqual([['sms', 'user', 'retry me'], ['sms', 'assistant', 'You said: retry me']]);
  });
});

describe('carrier keywords', () => {
  it('STOP opts out of sms (source sms_reply), later replies are suppressed, START opts back in; each confirmed and recorded', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    await setConsent(u.user_id, 'sms', { opted_in: true, proactive_allowed: true, consent_source: 'web_form' });
    await post(smsParams(u.phone_number, ' stop. '));
    await eventually(async () => sentTo(u.phone_number)[0], 15_000, 'the opt-out confirmation');
    expect(sentTo(u.phone_number)[0]!.params.Body).toBe(SMS_OPT_OUT_REPLY);
    expect(await getConsent(u.user_id, 'sms')).toMatchObject({ opted_in: false, proactive_allowed: false, consent_source: 'sms_reply' });

    const after = smsParams(u.phone_number, 'are you there?');
    await post(after);
    const inbound = await eventually(async () => (await rows(after.MessageSid!))[0]?.status === 'processed' && (await rows(after.MessageSid!))[0]);
    expect(await db()('channel_messages').where({ reply_to: inbound.message_id }).first()).toMatchObject({ status: 'suppressed', body: 'You said: are you there?' });

    await post(smsParams(u.phone_number, 'START'));
    await eventually(async () => sentTo(u.phone_number).length === 2, 15_000, 'the opt-in confirmation');
    expect(sentTo(u.phone_number).map((m) => m.params.Body)).toEqual([SMS_OPT_OUT_REPLY, SMS_OPT_IN_REPLY]);
    expect(await getConsent(u.user_id, 'sms')).toMatchObject({ opted_in: true, proactive_allowed: false });
  });
});

describe('POST /api/channels/sms/send', () => {
  it('sends a template by SMS from SMS_FROM_NUMBER only where consent allows proactive messages', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const body = { user_id: u.user_id, template_name: 'task_complete_confirm', variables: { task_name: 'Taxes' } };
    const refused = await api.request('/api/channels/sms/send', { method: 'POST', json: body });
    expect(refused.status).toBe(403);
    expect((await refused.json()).missing_consent).toEqual(['opted_in', 'proactive_allowed']);
    await setConsent(u.user_id, 'sms', { opted_in: true, proactive_allowed: true, consent_source: 'web_form' });
    const res = await api.request('/api/channels/sms/send', { method: 'POST', json: body });
    expect(res.status).toBe(202);
    const queued = await res.json();
    expect(queued).toMatchObject({ channel: 'sms', direction: 'outbound', status: 'queued', remote_address: u.phone_number });
    const sent = await eventually(async () => sentTo(u.phone_number)[0], 15_000, 'the template SMS');
    expect(sent.params.From).toBe(smsNumber);
    const record = await eventually(async () => {
      const r = await (await api.request(`/api/channels/messages/${queued.message_id}`)).json();
      return r.status === 'sent' && r;
    });
    expect(record.provider_message_id).toBe(sent.sid);
  });
});

describe('the sms interaction', () => {
  it('ends after CHANNELS_IDLE_SECONDS without a message (CHANNEL_LEFT, reason channel_idle); the next SMS opens a new one', async () => {
    const { endQuietChannelInteractions } = await import('../../shared/channels/idle.js');
    const u = await createUser({ phone_number: freshPhone() });
    await post(smsParams(u.phone_number, 'hello'));
    await eventually(async () => sentTo(u.phone_number)[0], 15_000, 'the reply');
    const { session } = await resolveSession(u.user_id);
    const [sms] = (await listInteractions(session.session_id)).filter((i) => i.channel === 'sms');
    const web = subscribe(api.url, session.session_id, 'chat');
    await web.opened;
    try {
      // Quiet for two hours (default limit 30 minutes).
      await db()('session_interactions').where({ interaction_id: sms!.interaction_id }).update({ started_at: db().raw(`now() - interval '2 hours'`) });
      await db()('session_messages').where({ interaction_id: sms!.interaction_id }).update({ created_at: db().raw(`now() - interval '2 hours'`) });
      expect(await endQuietChannelInteractions()).toBeGreaterThanOrEqual(1);
      const left = await web.next((e) => e.event_type === 'CHANNEL_LEFT' && e.data.interaction_id === sms!.interaction_id);
      expect(left).toMatchObject({ channel: 'sms', data: { reason: 'channel_idle' } });
      await post(smsParams(u.phone_number, 'back again'));
      await eventually(async () => sentTo(u.phone_number).length === 2, 15_000, 'the second reply');
      const all = (await listInteractions(session.session_id)).filter((i) => i.channel === 'sms');
      expect(all.map((i) => i.status)).toEqual(['closed', 'active']);
    } finally {
      web.close();
    }
  });
});

describe('erasing a user', () => {
  it('removes their channel messages, also those from their number recorded before it was linked', async () => {
    const phone = freshPhone();
    const early = smsParams(phone, 'before I had an account');
    await post(early);
    await eventually(async () => (await rows(early.MessageSid!))[0]?.status === 'processed', 15_000, 'the unknown-sender message processed');
    const u = await createUser({ phone_number: phone });
    await post(smsParams(phone, 'now I do'));
    await eventually(async () => sentTo(phone).length === 2, 15_000, 'the reply');
    const res = await api.request(`/api/users/${u.user_id}?by=dpo@example.com`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect((await res.json()).erased.channel_messages).toBe(4);
    expect(await db()('channel_messages').where({ remote_address: phone })).toHaveLength(0);
  });
});
