/**
 * Where a phone code goes without an approved messaging-app template: as messaging-app text while the
 * number's 24-hour window is open, else by SMS from SMS_FROM_NUMBER; both through the channel clients
 * against the local provider, and the code so received proves the number.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { startLocalTwilio } from '../helpers/local-twilio-server.js';
import { eventually } from '../helpers/eventually.js';
import { configureChatapp, freshPhone } from '../helpers/chatapp.js';
import { extendWindow } from '../../shared/channels/chatapp/window.store.js';
import { createUser } from '../../shared/users/users.store.js';
import { db } from '../../shared/db/index.js';
import { portalUserWithoutPhone } from '../helpers/people.js';

const twilio = await startLocalTwilio();
configureChatapp(twilio.baseUrl);
const smsFrom = '+15005550006';
process.env.SMS_FROM_NUMBER = smsFrom;
afterAll(() => twilio.close());

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const asUser = (userId: string, path: string, json: unknown) => api.request(path, { method: 'POST', json, headers: { 'X-User-Id': userId } });
const codeIn = (to: string) =>
  eventually(async () => /code is (\d{6})\./.exec(twilio.messages.filter((m) => m.params.To === to).at(-1)?.params.Body ?? '')?.[1], 15_000, `a code sent to ${to}`);

describe('phone codes without an approved template', () => {
  it('go by SMS from SMS_FROM_NUMBER to a number that has not written lately, and prove it', async () => {
    const person = await portalUserWithoutPhone();
    const phone = freshPhone();
    expect((await asUser(person, '/api/portal/profile/phone', { phone })).status).toBe(202);
    const code = await codeIn(phone);
    const sms = twilio.messages.find((m) => m.params.To === phone)!;
    expect(sms.params.From).toBe(smsFrom);
    expect(twilio.messages.filter((m) => m.params.To === `whatsapp:${phone}`)).toHaveLength(0);
    const proven = await asUser(person, '/api/portal/profile/phone/verify', { code });
    expect(proven.status).toBe(200);
    expect((await proven.json()).phone).toBe(phone);
  });

  it('go as messaging-app text while the number\'s window is open', async () => {
    // The number wrote in lately (as a user an integration registered), then its person proves it on their portal account.
    const phone = freshPhone();
    const earlier = await createUser({ phone_number: phone });
    await extendWindow(earlier.user_id, phone);
    await db()('users').where({ user_id: earlier.user_id }).update({ phone_number: null });
    const person = await portalUserWithoutPhone();
    expect((await asUser(person, '/api/portal/profile/phone', { phone })).status).toBe(202);
    const code = await codeIn(`whatsapp:${phone}`);
    expect(twilio.messages.filter((m) => m.params.To === phone)).toHaveLength(0);
    expect((await asUser(person, '/api/portal/profile/phone/verify', { code })).status).toBe(200);
  });
});
