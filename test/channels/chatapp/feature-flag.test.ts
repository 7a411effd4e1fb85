import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../../helpers/platform.js';

process.env.SERVICE_SESSION_SYSTEM = 'false';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
});

describe('SERVICE_SESSION_SYSTEM=false', () => {
  it('switches off the web chat and the messaging-app endpoints with 503', async () => {
    const chat = await api.request('/api/chat', { method: 'POST', json: { user_id: '00000000-0000-4000-8000-000000000000', message: 'hi' } });
    const send = await api.request('/api/chatapp/send', { method: 'POST', json: {} });
    const hook = await fetch(`${api.url}/chatapp/webhook`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'MessageSid=SM1' });
    expect([chat.status, send.status, hook.status]).toEqual([503, 503, 503]);
    expect((await chat.json()).detail).toMatch(/SERVICE_SESSION_SYSTEM=false/);
  });
});
