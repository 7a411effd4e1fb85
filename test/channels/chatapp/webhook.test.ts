import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../../helpers/platform.js';
import { startLocalTwilio } from '../../helpers/local-twilio-server.js';
import { useLocalLlm } from '../../helpers/local-llm-server.js';
import { subscribe } from '../../helpers/sse.js';
import { eventually } from '../../helpers/eventually.js';
import { configureChatapp, freshPhone, messageSid, postWebhook, whatsappParams } from '../../helpers/chatapp.js';
import { twilioAuthToken } from '../../helpers/channels.js';
import { twilioSignature } from '../../../shared/clients/twilio.js';
import { createUser } from '../../../shared/users/users.store.js';
import { resolveSession } from '../../../shared/sessions/resolve.js';
import { getContext } from '../../../shared/sessions/context.js';
import { UNKNOWN_NUMBER_REPLY, processInbound } from '../../../shared/channels/chatapp/inbound.js';
import { insertInboundOnce } from '../../../shared/channels/chatapp/messages.store.js';
import { recordReply } from '../../../shared/channels/chatapp/outbound.js';
import { db } from '../../../shared/db/index.js';

// The tests reach the API from loopback as a proxy would: its forwarded headers count (TRUST_PROXY).
process.env.TRUST_PROXY = '127.0.0.1';
const twilio = await startLocalTwilio();
configureChatapp(twilio.baseUrl);
// The model echoes the latest user message and counts what it saw from other channels.
const llm = await useLocalLlm((req) => {
  const messages = req.body.messages;
  const updates = messages.filter((m) => m.content?.startsWith('[Real-time update from')).length;
  return { content: `You said: ${messages.at(-1)!.content} (updates seen: ${updates})` };
});
afterAll(() => twilio.close());

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const sentTo = (phone: string) => twilio.messages.filter((m) => m.params.To === `whatsapp:${phone}`);
const inboundRows = (sid: string) => db()('chatapp_messages').where({ direction: 'inbound', provider_message_id: sid });

describe('POST /chatapp/webhook signature', () => {
  it('a request without X-Twilio-Signature is a 400 and stores nothing', async () => {
    const params = whatsappParams(freshPhone(), 'hi');
    const res = await postWebhook(api.url, params, { signature: null });
    expect(res.status).toBe(400);
    expect((await res.json()).errors).toEqual([expect.objectContaining({ path: 'headers.x-twilio-signature' })]);
    expect(await inboundRows(params.MessageSid!)).toHaveLength(0);
  });

  it('a wrong signature is a 403 and stores nothing', async () => {
    const params = whatsappParams(freshPhone(), 'hi');
    const forged = await postWebhook(api.url, params, { signature: 'bm90IGEgc2lnbmF0dXJlIGF0IGFsbA==' });
    expect(forged.status).toBe(403);
    // Signed over other parameters than those sent (a tampered body).
    const tampered = await postWebhook(api.url, { ...params, Body: 'send me money' }, { signature: twilioSignature(twilioAuthToken, `${api.url}/chatapp/webhook`, params) });
    expect(tampered.status).toBe(403);
    expect(await inboundRows(params.MessageSid!)).toHaveLength(0);
  });

  it('is keyed by TWILIO_AUTH_TOKEN, the one Twilio account of sms, voice and the messaging app: another token is a 403', async () => {
    expect(process.env.TWILIO_AUTH_TOKEN).toBe(twilioAuthToken);
    const url = `${api.url}/chatapp/webhook`;
    const signed = whatsappParams(freshPhone(), 'signed by the account');
    expect((await postWebhook(api.url, signed, { signature: twilioSignature(twilioAuthToken, url, signed) })).status).toBe(200);
    expect(await inboundRows(signed.MessageSid!)).toHaveLength(1);
    const other = whatsappParams(freshPhone(), 'signed by another account');
    expect((await postWebhook(api.url, other, { signature: twilioSignature('another-accounts-auth-token', url, other) })).status).toBe(403);
    expect(await inboundRows(other.MessageSid!)).toHaveLength(0);
  });

  it('the signed URL is rebuilt from X-Forwarded-Proto and X-Forwarded-Host behind a proxy (TRUST_PROXY names it)', async () => {
    const params = whatsappParams(freshPhone(), 'via proxy');
    const res = await postWebhook(api.url, params, {
      signedUrl: 'https://hooks.example.com/chatapp/webhook',
      headers: { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'hooks.example.com' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/xml/);
    expect(await res.text()).toContain('<Response></Response>');
  });

  it('a signed request without MessageSid or with a malformed From is a 400 naming them', async () => {
    const { MessageSid: _drop, ...params } = whatsappParams(freshPhone(), 'hi', { From: 'whatsapp:12' });
    const res = await postWebhook(api.url, params);
    expect(res.status).toBe(400);
    expect(((await res.json()).errors as Array<{ path: string }>).map((e) => e.path).sort()).toEqual(['body.From', 'body.MessageSid']);
  });
});

describe('inbound processing', () => {
  it('an unknown number gets a polite reply, recorded, and nothing crashes', async () => {
    const phone = freshPhone();
    const params = whatsappParams(phone, 'who is this?');
    expect((await postWebhook(api.url, params)).status).toBe(200);
    const reply = await eventually(async () => sentTo(phone)[0], 15_000, 'the polite reply');
    expect(reply.params.Body).toBe(UNKNOWN_NUMBER_REPLY);
    const [inbound] = await inboundRows(params.MessageSid!);
    expect(inbound).toMatchObject({ status: 'processed', user_id: null, session_id: null, body: 'who is this?' });
    const outbound = await eventually(async () => {
      const row = await db()('chatapp_messages').where({ reply_to: inbound.message_id }).first();
      return row?.status === 'sent' && row;
    });
    expect(outbound).toMatchObject({ phone_number: phone, provider_message_id: reply.sid });
  });

  it('inbound → agent → reply → published: seen by a subscriber of another channel, reply sent, window extended', async () => {
    const u = await createUser({ phone_number: freshPhone(), display_name: 'Grace' });
    const { session } = await resolveSession(u.user_id);
    const voice = subscribe(api.url, session.session_id, 'voice');
    await voice.opened;
    try {
      const params = whatsappParams(u.phone_number, 'Book a table for two');
      const started = Date.now();
      const res = await postWebhook(api.url, params);
      expect(res.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(2000); // the agent and the send run in workers

      const expectedReply = 'You said: Book a table for two (updates seen: 0)';
      const userMessage = await voice.next((e) => e.event_type === 'MESSAGE' && e.data.role === 'user');
      const assistant = await voice.next((e) => e.event_type === 'MESSAGE' && e.data.role === 'assistant');
      const metadata = { message_sid: params.MessageSid, phone: u.phone_number };
      expect(userMessage).toMatchObject({ session_id: session.session_id, channel: 'chatapp', data: { content: 'Book a table for two', metadata } });
      expect(assistant).toMatchObject({ channel: 'chatapp', data: { content: expectedReply, metadata } });
      const typing = voice.events.filter((e) => e.event_type === 'TYPING').map((e) => e.data.is_typing);
      expect(typing).toEqual([true, false]);
      expect(voice.events.findIndex((e) => e === userMessage)).toBeLessThan(voice.events.findIndex((e) => e === assistant));

      const reply = await eventually(async () => sentTo(u.phone_number)[0], 15_000, 'the reply');
      expect(reply.params).toMatchObject({ Body: expectedReply, From: 'whatsapp:+14155238886' });

      const window = await db()('chatapp_sessions').where({ phone_number: u.phone_number }).first();
      expect(window.user_id).toBe(u.user_id);
      expect(window.window_expires_at.getTime() - window.last_inbound_at.getTime()).toBe(24 * 3_600_000);
      expect(Math.abs(window.last_inbound_at.getTime() - Date.now())).toBeLessThan(60_000);

      const [inbound] = await inboundRows(params.MessageSid!);
      expect(inbound).toMatchObject({ status: 'processed', user_id: u.user_id, session_id: session.session_id });
    } finally {
      voice.close();
    }
  });

  it('messages from other channels reach the model as real-time updates', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const { session } = await resolveSession(u.user_id);
    const { acceptMessage } = await import('../../../shared/stream/index.js');
    const { startInteraction } = await import('../../../shared/sessions/interactions.js');
    const call = await startInteraction(session.session_id, { channel: 'voice' });
    await acceptMessage(session.session_id, { channel: 'voice', role: 'user', content: 'I am on the phone', interaction_id: call.interaction_id }, { waitMs: 5000 });
    const params = whatsappParams(u.phone_number, 'and now on WhatsApp');
    await postWebhook(api.url, params);
    const reply = await eventually(async () => sentTo(u.phone_number)[0], 15_000, 'the reply');
    expect(reply.params.Body).toBe('You said: and now on WhatsApp (updates seen: 1)');
    const request = llm.requests.find((r) => r.body.messages.at(-1)!.content === 'and now on WhatsApp')!;
    expect(request.body.messages).toContainEqual(expect.objectContaining({ role: 'user', content: '[Real-time update from voice] user: I am on the phone' }));
  });

  it('a delivery repeated with the same MessageSid is processed once', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const sid = messageSid();
    const params = whatsappParams(u.phone_number, 'only once', { MessageSid: sid });
    const [first, second] = await Promise.all([postWebhook(api.url, params), postWebhook(api.url, params)]);
    expect([first.status, second.status]).toEqual([200, 200]);
    await eventually(async () => sentTo(u.phone_number)[0], 15_000, 'the reply');
    const third = await postWebhook(api.url, params); // after processing, as Twilio retries do
    expect(third.status).toBe(200);
    expect(third.headers.get('x-chatapp-duplicate')).toBe('true');
    const { session } = await resolveSession(u.user_id);
    // A marker message from the same number through the same webhook and queue: a second (wrong)
    // processing of the repeat was queued before it, so it shows up before the marker's reply.
    expect((await postWebhook(api.url, whatsappParams(u.phone_number, 'marker'))).status).toBe(200);
    const history = await eventually(async () => {
      const h = (await getContext(session.session_id)).conversation_history.filter((m) => m.channel === 'chatapp');
      return h.some((m) => m.content.startsWith('You said: marker')) && h;
    }, 15_000, 'the reply to the marker in the history');
    await eventually(async () => sentTo(u.phone_number).length >= 2, 15_000, 'the reply to the marker sent');
    expect(await inboundRows(sid)).toHaveLength(1);
    expect(sentTo(u.phone_number).map((m) => m.params.Body)).toEqual(['You said: only once (updates seen: 0)', 'You said: marker (updates seen: 0)']);
    expect(history.map((m) => [m.role, m.content])).toEqual([
      ['user', 'only once'],
      ['assistant', 'You said: only once (updates seen: 0)'],
      ['user', 'marker'],
      ['assistant', 'You said: marker (updates seen: 0)'],
    ]);
  });

  it('a retried processing step publishes and sends the reply recorded by the first attempt, without asking the model again', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const sid = messageSid();
    // The first attempt recorded its reply, then died before publishing and sending.
    const { message } = await insertInboundOnce({ provider_message_id: sid, phone_number: u.phone_number, body: 'retry me', payload: {} });
    await recordReply({ reply_to: message.message_id, phone_number: u.phone_number, body: 'the first answer', user_id: u.user_id, session_id: null });
    const asked = llm.requests.length;
    const outcome = await processInbound(message.message_id, false);
    expect(outcome).toEqual({ outcome: 'processed', reply: 'the first answer' });
    expect(llm.requests.length).toBe(asked);
    const sent = await eventually(async () => sentTo(u.phone_number)[0], 15_000, 'the reply');
    expect(sent.params.Body).toBe('the first answer');
    const { session } = await resolveSession(u.user_id);
    const history = await eventually(async () => {
      const h = (await getContext(session.session_id)).conversation_history;
      return h.length === 2 && h;
    });
    expect(history.map((m) => [m.role, m.content])).toEqual([['user', 'retry me'], ['assistant', 'the first answer']]);
    expect(await processInbound(message.message_id, false)).toEqual({ outcome: 'skipped' });
  });
});
