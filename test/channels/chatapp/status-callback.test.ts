import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../../helpers/platform.js';
import { startLocalTwilio } from '../../helpers/local-twilio-server.js';
import { eventually } from '../../helpers/eventually.js';
import { configureChatapp, freshPhone, postWebhook, whatsappParams } from '../../helpers/chatapp.js';
import { twilioAuthToken } from '../../helpers/channels.js';
import { twilioSignature } from '../../../shared/clients/twilio.js';
import { createUser } from '../../../shared/users/users.store.js';
import { extendWindow } from '../../../shared/channels/chatapp/window.store.js';
import type { ChatappMessage } from '../../../shared/channels/chatapp/chatapp.schemas.js';

const twilio = await startLocalTwilio();
configureChatapp(twilio.baseUrl);
// The public address the provider calls (a proxy in front of us): signatures are over it, not over our local address.
process.env.CHATAPP_PUBLIC_URL = 'https://hooks.example.com/chatapp/webhook';
const statusUrl = 'https://hooks.example.com/chatapp/status';
afterAll(() => twilio.close());

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

function postStatus(params: Record<string, string>, signature: string | null = twilioSignature(twilioAuthToken, statusUrl, params)) {
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
  if (signature !== null) headers['X-Twilio-Signature'] = signature;
  return fetch(`${api.url}/chatapp/status`, { method: 'POST', headers, body: new URLSearchParams(params).toString() });
}
const read = async (id: string) => (await (await api.request(`/api/chatapp/messages/${id}`)).json()) as ChatappMessage;

describe('CHATAPP_PUBLIC_URL and delivery status callbacks', () => {
  it('the webhook checks signatures against CHATAPP_PUBLIC_URL, not the local address', async () => {
    const params = whatsappParams(freshPhone(), 'hello');
    expect((await postWebhook(api.url, params, { signedUrl: 'https://hooks.example.com/chatapp/webhook' })).status).toBe(200);
    expect((await postWebhook(api.url, whatsappParams(freshPhone(), 'hello'))).status).toBe(403);
  });

  it('sends ask for status callbacks, which record the latest provider status and ignore older ones', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    await extendWindow(u.user_id, u.phone_number);
    const queued = (await (await api.request('/api/chatapp/messages', { method: 'POST', json: { user_id: u.user_id, text: 'track me' } })).json()) as ChatappMessage;
    const sent = await eventually(async () => {
      const m = await read(queued.message_id);
      return m.status === 'sent' && m;
    });
    const delivered = twilio.messages.find((m) => m.sid === sent.provider_message_id)!;
    expect(delivered.params.StatusCallback).toBe(statusUrl);

    const base = { MessageSid: sent.provider_message_id!, AccountSid: delivered.accountSid, To: `whatsapp:${u.phone_number}` };
    expect((await postStatus({ ...base, MessageStatus: 'delivered' })).status).toBe(204);
    expect((await read(queued.message_id)).provider_status).toBe('delivered');
    expect((await postStatus({ ...base, MessageStatus: 'sent' })).status).toBe(204); // late, out of order
    expect((await read(queued.message_id)).provider_status).toBe('delivered');
    expect((await postStatus({ ...base, MessageStatus: 'undelivered', ErrorCode: '63024', ErrorMessage: 'Invalid message recipient' })).status).toBe(204);
    expect(await read(queued.message_id)).toMatchObject({ status: 'sent', provider_status: 'undelivered', error: 'provider status undelivered (code 63024): Invalid message recipient' });
  });

  it('a status callback without a valid signature is refused and changes nothing', async () => {
    const params = { MessageSid: 'SM' + 'f'.repeat(32), MessageStatus: 'read' };
    expect((await postStatus(params, null)).status).toBe(400);
    expect((await postStatus(params, twilioSignature(twilioAuthToken, `${api.url}/chatapp/status`, params))).status).toBe(403);
    expect((await postStatus({ MessageSid: 'SM1' })).status).toBe(400);
  });
});
