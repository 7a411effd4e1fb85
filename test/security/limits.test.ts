/**
 * Limits per person, held in Redis (so they hold across API processes): uploads per hour (count and
 * bytes) and at once, publishes per session, open streams (the person's own and those an API key opens
 * on their sessions), anonymous sign-in starts; over one, 429 with Retry-After.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { createUser } from '../../shared/users/users.store.js';
import { resolveSession } from '../../shared/sessions/resolve.js';
import { freshPhone } from '../helpers/chatapp.js';
import { eventually } from '../helpers/eventually.js';

process.env.LIMIT_UPLOADS_PER_HOUR = '3';
process.env.LIMIT_UPLOAD_BYTES_PER_HOUR = String(64 * 1024);
process.env.LIMIT_PUBLISHES_PER_SESSION_PER_MINUTE = '5';
process.env.LIMIT_SIGNIN_STARTS_PER_MINUTE = '3';
process.env.LIMIT_STREAMS_PER_PERSON = '2';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

function upload(userId: string, bytes: number) {
  const form = new FormData();
  form.append('file', new Blob(['x'.repeat(bytes)], { type: 'text/plain' }), 'notes.txt');
  return api.request('/api/portal/documents', { method: 'POST', body: form, headers: { 'X-User-Id': userId } });
}

describe('limits per person', () => {
  it('uploads per hour: the fourth is a 429 with Retry-After; another person is not affected', async () => {
    const a = await createUser({ phone_number: freshPhone() });
    const b = await createUser({ phone_number: freshPhone() });
    for (let i = 0; i < 3; i++) expect((await upload(a.user_id, 100)).status).toBe(201);
    const over = await upload(a.user_id, 100);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await over.json()).detail).toContain('LIMIT_UPLOADS_PER_HOUR');
    expect((await upload(b.user_id, 100)).status).toBe(201);
  });

  it('a reindex counts as an upload: the same stored file cannot be parsed again without end', async () => {
    const d = await createUser({ phone_number: freshPhone() });
    const created = await upload(d.user_id, 100);
    expect(created.status).toBe(201);
    const { document_id } = await created.json();
    const reindex = () => api.request(`/api/portal/documents/${document_id}/reindex`, { method: 'POST', headers: { 'X-User-Id': d.user_id } });
    expect((await reindex()).status).toBe(202);
    expect((await reindex()).status).toBe(202);
    const over = await reindex();
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await over.json()).detail).toContain('LIMIT_UPLOADS_PER_HOUR');
  });

  it('upload bytes per hour are counted before the body is stored', async () => {
    const c = await createUser({ phone_number: freshPhone() });
    expect((await upload(c.user_id, 40 * 1024)).status).toBe(201);
    const over = await upload(c.user_id, 40 * 1024);
    expect(over.status).toBe(429);
    expect((await over.json()).detail).toContain('LIMIT_UPLOAD_BYTES_PER_HOUR');
  });

  it('publishes (messages and events) per session per minute', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const { session } = await resolveSession(u.user_id);
    const post = (i: number) => api.request(`/api/sessions/${session.session_id}/events`, { method: 'POST', json: { event_type: 'TYPING', channel: 'chat', data: { is_typing: i % 2 === 0 } } });
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await post(i)).status);
    expect(statuses.slice(0, 5).every((s) => s === 200 || s === 202)).toBe(true);
    expect(statuses[5]).toBe(429);
  });

  it('open streams per person, over all processes: the third is a 429; a closed one frees its slot', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const { session } = await resolveSession(u.user_id);
    const open = async () => {
      const abort = new AbortController();
      const res = await api.request(`/api/portal/chat/${session.session_id}/events`, { headers: { 'X-User-Id': u.user_id }, signal: abort.signal });
      return { status: res.status, close: () => abort.abort() };
    };
    const first = await open();
    const second = await open();
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await open();
    expect(third.status).toBe(429);
    first.close();
    const again = await eventually(async () => {
      const s = await open();
      if (s.status === 200) return s;
      return null;
    }, 5000, 'a slot to come back');
    second.close();
    again.close();
  });

  it('streams an API key opens on one person\'s sessions count for that person, over all processes: the third is a 429 with Retry-After', async () => {
    const u = await createUser({ phone_number: freshPhone() });
    const other = await createUser({ phone_number: freshPhone() });
    const { session } = await resolveSession(u.user_id);
    const { session: otherSession } = await resolveSession(other.user_id);
    const open = async (sessionId: string, channel: string) => {
      const abort = new AbortController();
      const res = await api.request(`/api/sessions/${sessionId}/events?channel=${channel}`, { signal: abort.signal });
      return { res, close: () => abort.abort() };
    };
    const first = await open(session.session_id, 'chat');
    const second = await open(session.session_id, 'voice');
    expect([first.res.status, second.res.status]).toEqual([200, 200]);
    const third = await open(session.session_id, 'sms');
    expect(third.res.status).toBe(429);
    expect(Number(third.res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await third.res.json()).detail).toContain('LIMIT_STREAMS_PER_PERSON');
    // The same key still streams another person's session: the cap is the person's, not the key's.
    const elsewhere = await open(otherSession.session_id, 'chat');
    expect(elsewhere.res.status).toBe(200);
    // The person's own portal chat stream shares their slots.
    const portal = await api.request(`/api/portal/chat/${session.session_id}/events`, { headers: { 'X-User-Id': u.user_id } });
    expect(portal.status).toBe(429);
    second.close();
    const again = await eventually(async () => {
      const s = await open(session.session_id, 'sms');
      if (s.res.status === 200) return s;
      return null;
    }, 5000, 'a slot to come back');
    first.close();
    again.close();
    elsewhere.close();
  });

  it('anonymous sign-in starts per address', async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await api.request('/api/global/auth/login', { auth: false, redirect: 'manual' })).status);
    expect(statuses[3]).toBe(429);
    expect(statuses.slice(0, 3)).not.toContain(429);
  });
});
