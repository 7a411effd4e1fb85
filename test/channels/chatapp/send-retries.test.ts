/**
 * A messaging-app send whose answer is lost is not sent twice: the local provider
 * accepts the message but answers after the client's timeout; the retried job finds the message at
 * the provider (Messages list by To and From, same body, created since the first attempt) and
 * records its id instead of sending again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../../helpers/platform.js';
import { startLocalTwilio } from '../../helpers/local-twilio-server.js';
import { eventually } from '../../helpers/eventually.js';
import { configureChatapp, freshPhone, testFromNumber } from '../../helpers/chatapp.js';
import { createUser } from '../../../shared/users/users.store.js';
import { extendWindow } from '../../../shared/channels/chatapp/window.store.js';
import { db } from '../../../shared/db/index.js';
import type { ChatappMessage } from '../../../shared/channels/chatapp/chatapp.schemas.js';

const twilio = await startLocalTwilio();
configureChatapp(twilio.baseUrl);
process.env.CHATAPP_TIMEOUT_MS = '400';
afterAll(() => twilio.close());

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

async function userInWindow() {
  const u = await createUser({ phone_number: freshPhone() });
  await extendWindow(u.user_id, u.phone_number);
  return u;
}
const readMessage = async (id: string) => (await (await api.request(`/api/chatapp/messages/${id}`)).json()) as ChatappMessage;
const sentTo = (phone: string) => twilio.messages.filter((m) => m.params.To === `whatsapp:${phone}`);
const send = async (user_id: string, text: string) => (await (await api.request('/api/chatapp/messages', { method: 'POST', json: { user_id, text } })).json()) as ChatappMessage;

describe('a send whose answer was lost', () => {
  it('is looked up at the provider on retry and adopted: one message at the provider, its sid recorded', async () => {
    const u = await userInWindow();
    twilio.delayNext(1500);
    const queued = await send(u.user_id, 'Your table is booked.');
    // The intent is recorded before the provider is called.
    await eventually(async () => (await readMessage(queued.message_id)).status === 'sending', 5_000, 'the message to be sending');
    const sent = await eventually(async () => {
      const m = await readMessage(queued.message_id);
      return m.status === 'sent' && m;
    }, 15_000, 'the message to be sent');
    const atProvider = sentTo(u.phone_number);
    expect(atProvider).toHaveLength(1);
    expect(sent).toMatchObject({ status: 'sent', provider_message_id: atProvider[0]!.sid, error: null });
    // The retry asked the provider, for this recipient from our number.
    const lookup = twilio.lookups.find((q) => q.get('To') === `whatsapp:${u.phone_number}`);
    expect(lookup?.get('From')).toBe(testFromNumber);
    // The first attempt's late answer arrives and changes nothing: still one message, the same sid.
    await eventually(() => twilio.lateAnswers() === 1, 5_000, 'the late answer of the first attempt');
    expect(sentTo(u.phone_number)).toHaveLength(1);
    expect(await readMessage(queued.message_id)).toMatchObject({ status: 'sent', provider_message_id: atProvider[0]!.sid });
  });

  it('is sent again when the provider has no such message, and a copy already recorded on another message is not adopted', async () => {
    const u = await userInWindow();
    const first = await send(u.user_id, 'Same words.');
    await eventually(async () => (await readMessage(first.message_id)).status === 'sent', 10_000, 'the first message');
    // A second message with the same words, left sending by an attempt the provider never received.
    const [second] = await db()('chatapp_messages')
      .insert({ direction: 'outbound', user_id: u.user_id, phone_number: u.phone_number, kind: 'text', body: 'Same words.', status: 'sending', send_started_at: new Date(Date.now() - 1000) })
      .returning('message_id');
    const { deliver } = await import('../../../shared/channels/chatapp/outbound.js');
    const done = await deliver(second.message_id, false);
    const atProvider = sentTo(u.phone_number);
    expect(atProvider).toHaveLength(2);
    expect(done).toMatchObject({ status: 'sent', provider_message_id: atProvider[1]!.sid });
    expect((await readMessage(first.message_id)).provider_message_id).toBe(atProvider[0]!.sid);
  });
});
