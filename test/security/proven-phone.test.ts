/**
 * Proven phone numbers: a number reaches an account only after the code sent to it (through the
 * messaging-app client, against the local provider) is entered; a number another account has gets
 * the same answers as a free one; codes expire, work once and allow few attempts; the messaging-app
 * window follows a change of number.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { startLocalTwilio } from '../helpers/local-twilio-server.js';
import { useLocalLlm } from '../helpers/local-llm-server.js';
import { eventually } from '../helpers/eventually.js';
import { configureChatapp, freshPhone, postWebhook, whatsappParams } from '../helpers/chatapp.js';
import { createUser } from '../../shared/users/users.store.js';
import { extendWindow, getWindow, windowOpen } from '../../shared/channels/chatapp/window.store.js';
import { db } from '../../shared/db/index.js';
import { portalUserWithoutPhone } from '../helpers/people.js';
import { queue } from '../../shared/queues.js';

const twilio = await startLocalTwilio();
configureChatapp(twilio.baseUrl);
const templateSid = 'HX' + 'c'.repeat(32);
process.env.CHATAPP_TEMPLATE_SIDS = `phone_verification=${templateSid}`;
await useLocalLlm(() => ({ content: 'Noted.' }));
afterAll(() => twilio.close());

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const asUser = (userId: string, path: string, init: { method?: string; json?: unknown } = {}) => api.request(path, { ...init, headers: { 'X-User-Id': userId } });
const askCode = (userId: string, phone: string) => asUser(userId, '/api/portal/profile/phone', { method: 'POST', json: { phone } });
const enterCode = (userId: string, code: string) => asUser(userId, '/api/portal/profile/phone/verify', { method: 'POST', json: { code } });
/** The code the provider was asked to deliver to a number (the approved template's one variable). */
const codeSentTo = (phone: string) =>
  eventually(async () => {
    const sent = twilio.messages.filter((m) => m.params.To === `whatsapp:${phone}` && m.params.ContentSid === templateSid).at(-1);
    return sent && (JSON.parse(sent.params.ContentVariables!) as { 1: string })[1];
  }, 15_000, `a code sent to ${phone}`);
const withoutRequestId = (body: Record<string, unknown>) => ({ ...body, request_id: undefined });
/** Where an inbound messaging-app message from `phone` went: its user (null: an unknown number). */
async function routedTo(phone: string): Promise<string | null> {
  const params = whatsappParams(phone, 'hello, is this mine?');
  expect((await postWebhook(api.url, params)).status).toBe(200);
  const row = await eventually(async () => {
    const r = await db()('chatapp_messages').where({ direction: 'inbound', provider_message_id: params.MessageSid }).first();
    return r?.status === 'processed' && r;
  }, 20_000, 'the inbound message processed');
  return row.user_id;
}

describe('proven phone numbers', () => {
  it('a claimed number routes nothing; the right code sets it and then it routes', async () => {
    const claimer = await portalUserWithoutPhone();
    const phone = freshPhone();
    const asked = await askCode(claimer, phone);
    expect(asked.status).toBe(202);
    expect(await asked.json()).toMatchObject({ status: 'code_sent', phone });
    const code = await codeSentTo(phone);
    expect(code).toMatch(/^\d{6}$/);
    // Stored hashed: neither the code nor the message with it is kept.
    const stored = await db()('phone_verifications').where({ user_id: claimer }).first();
    expect(stored.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(code);
    expect(await db()('chatapp_messages').where({ phone_number: phone, direction: 'outbound' })).toHaveLength(0);

    // Claimed, not proven: the profile keeps no number and the number's messages reach nobody.
    expect((await (await asUser(claimer, '/api/portal/profile')).json()).phone).toBeNull();
    expect(await routedTo(phone)).toBeNull();
    // Nor can the profile route set it directly.
    const direct = await asUser(claimer, '/api/portal/profile', { method: 'PATCH', json: { phone } });
    expect(direct.status).toBe(400);
    expect((await direct.json()).errors).toEqual([expect.objectContaining({ path: 'body.phone' })]);

    const proven = await enterCode(claimer, code);
    expect(proven.status).toBe(200);
    expect((await proven.json()).phone).toBe(phone);
    expect(await routedTo(phone)).toBe(claimer);
    // Used once.
    expect((await enterCode(claimer, code)).status).toBe(400);
  }, 60_000);

  it('a wrong code and an expired code fail alike, naming body.code', async () => {
    const person = await portalUserWithoutPhone();
    const phone = freshPhone();
    expect((await askCode(person, phone)).status).toBe(202);
    const code = await codeSentTo(phone);
    const wrong = await enterCode(person, code === '000000' ? '000001' : '000000');
    expect(wrong.status).toBe(400);
    const wrongBody = await wrong.json();
    expect(wrongBody.errors).toEqual([{ path: 'body.code', message: 'is wrong or has expired' }]);

    await db()('phone_verifications').where({ user_id: person }).update({ expires_at: db().raw("now() - interval '1 second'") });
    const expired = await enterCode(person, code);
    expect(expired.status).toBe(400);
    expect(withoutRequestId(await expired.json())).toEqual(withoutRequestId(wrongBody));
    expect((await (await asUser(person, '/api/portal/profile')).json()).phone).toBeNull();
  });

  it('a taken number and a free one get identical answers; no code goes to the taken one and none proves it', async () => {
    const owner = await createUser({ phone_number: freshPhone() });
    const taker = await portalUserWithoutPhone();
    const honest = await portalUserWithoutPhone();
    const free = freshPhone();

    const takenAsk = await askCode(taker, owner.phone_number);
    const freeAsk = await askCode(honest, free);
    expect(takenAsk.status).toBe(freeAsk.status);
    const takenBody = await takenAsk.json();
    const freeBody = await freeAsk.json();
    expect(Object.keys(takenBody).sort()).toEqual(Object.keys(freeBody).sort());
    expect({ ...takenBody, phone: 'x', expires_at: 'x' }).toEqual({ ...freeBody, phone: 'x', expires_at: 'x' });
    expect([...takenAsk.headers.keys()].filter((h) => h !== 'date' && h !== 'x-request-id' && h !== 'content-length').sort())
      .toEqual([...freeAsk.headers.keys()].filter((h) => h !== 'date' && h !== 'x-request-id' && h !== 'content-length').sort());

    const freeCode = await codeSentTo(free);
    // Whatever the taker enters (even the code another number got) fails exactly as a wrong code for a free number does.
    const takenVerify = await enterCode(taker, freeCode);
    const freeWrong = await enterCode(honest, freeCode === '123456' ? '654321' : '123456');
    expect(takenVerify.status).toBe(freeWrong.status);
    expect(withoutRequestId(await takenVerify.json())).toEqual(withoutRequestId(await freeWrong.json()));

    // The owner's number got nothing (its job ran and sent nothing), and still reaches the owner.
    const { verification_id } = await db()('phone_verifications').where({ user_id: taker }).first();
    await eventually(async () => ((await queue('chatapp').getJob(`phone-code-${verification_id}`)) ? null : true), 15_000, 'the taken number\'s job done');
    expect(twilio.messages.filter((m) => m.params.To === `whatsapp:${owner.phone_number}`)).toHaveLength(0);
    expect(await routedTo(owner.phone_number)).toBe(owner.user_id);
  }, 60_000);

  it('entering codes is limited: over LIMIT_PHONE_CODE_ATTEMPTS, 429 with Retry-After', async () => {
    const guesser = await portalUserWithoutPhone();
    expect((await askCode(guesser, freshPhone())).status).toBe(202);
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 6; i++) {
      last = await enterCode(guesser, String(100000 + i));
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 5)).toEqual([400, 400, 400, 400, 400]);
    expect(statuses[5]).toBe(429);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await last!.json()).detail).toContain('LIMIT_PHONE_CODE_ATTEMPTS');
  });

  it('the messaging-app window follows a change of number: the old one no longer applies, the new one starts closed', async () => {
    const person = await portalUserWithoutPhone();
    const oldPhone = freshPhone();
    expect((await askCode(person, oldPhone)).status).toBe(202);
    expect((await enterCode(person, await codeSentTo(oldPhone))).status).toBe(200);
    await extendWindow(person, oldPhone);
    expect(await windowOpen(oldPhone)).toBe(true);
    // The person can be written to freely while their window is open.
    expect((await api.request('/api/chatapp/messages', { method: 'POST', json: { user_id: person, text: 'still there?' } })).status).toBe(202);

    const newPhone = freshPhone();
    expect((await askCode(person, newPhone)).status).toBe(202);
    expect((await enterCode(person, await codeSentTo(newPhone))).status).toBe(200);
    expect(await getWindow(oldPhone)).toBeUndefined();
    expect(await windowOpen(newPhone)).toBe(false);
    const outside = await api.request('/api/chatapp/messages', { method: 'POST', json: { user_id: person, text: 'still there?' } });
    expect(outside.status).toBe(409);
    expect((await outside.json()).rule).toBe('customer_window_24h');
  }, 60_000);
});
