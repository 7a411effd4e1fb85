import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';

let api: Platform;
beforeAll(async () => {
  process.env.SERVICE_SESSION_SYSTEM = 'false';
  api = await startPlatform({ workers: false });
});

const id = '7d444840-9dc0-11d1-b245-5ffdce74fad2';

describe('SERVICE_SESSION_SYSTEM=false', () => {
  it('every session endpoint answers 503 problem+json saying the session system is off', async () => {
    const calls: Array<[string, string, unknown?]> = [
      ['POST', '/api/sessions/resolve', { user_id: id }],
      ['POST', '/api/sessions/resolve', { user_id: 'not-even-valid' }],
      ['GET', `/api/users/by-phone/+14155550100`],
      ['POST', '/api/users', { phone_number: '+14155550100' }],
      ['GET', `/api/users/${id}`],
      ['GET', `/api/users/${id}/consents/sms`],
      ['PUT', `/api/users/${id}/consents/sms`, { opted_in: true }],
      ['POST', `/api/sessions/${id}/interactions`, { channel: 'chat' }],
      ['POST', `/api/sessions/interactions/${id}/close`, {}],
      ['GET', `/api/sessions?user_id=${id}`],
      ['GET', `/api/sessions/${id}`],
      ['POST', `/api/sessions/${id}/close`],
      ['GET', `/api/sessions/${id}/context`],
      ['GET', `/api/sessions/${id}/events?channel=chat`],
      ['POST', `/api/sessions/${id}/messages`, { channel: 'chat', role: 'user', content: 'x', interaction_id: id }],
      ['POST', `/api/sessions/${id}/events`, { event_type: 'TYPING', channel: 'chat', data: { is_typing: true } }],
    ];
    for (const [method, path, body] of calls) {
      const res = await api.request(path, { method, ...(body !== undefined ? { json: body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect((await res.json()).detail).toMatch(/session system is switched off/);
    }
  });

  it('other routes are unaffected', async () => {
    expect((await api.request('/healthz')).status).toBe(200);
    // Routers mounted after the session ones (CRM, SRE) must not inherit the session gate.
    for (const path of ['/api/v1/leads', '/api/v1/cmdb/entities', '/api/v1/alerts', '/api/v1/tools']) {
      expect((await api.request(path)).status, path).toBe(200);
    }
  });
});
