import { beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { db } from '../../shared/db/index.js';
import { expireSessions } from '../../shared/sessions/resolve.js';
import { schedules } from '../../workers/schedules.js';
import { tick } from '../../workers/scheduler.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { expectFieldError, json, newUser } from './helpers.js';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const resolve = (userId: string, resumeWindow?: string) =>
  api.request('/api/sessions/resolve', { method: 'POST', json: { user_id: userId, ...(resumeWindow ? { resume_window: resumeWindow } : {}) } });

describe('resolving a session', () => {
  it('a user without a live session gets a new active one, resumed=false', async () => {
    const userId = await newUser(api);
    const body = await json(await resolve(userId), 200);
    expect(body).toMatchObject({ user_id: userId, status: 'active', resumed: false });
    expect(body.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(body.created_at).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(body.last_activity).toBeTruthy();
  });

  it('a live session inside the resume window is resumed (idle → active)', async () => {
    const userId = await newUser(api);
    const first = await json(await resolve(userId), 200);
    await db()('sessions').where({ session_id: first.session_id }).update({ status: 'idle' });
    const again = await json(await resolve(userId), 200);
    expect(again).toMatchObject({ session_id: first.session_id, resumed: true, status: 'active' });
  });

  it('a session past its window is closed and replaced; its history is not restored', async () => {
    const userId = await newUser(api);
    const first = await json(await resolve(userId), 200);
    await db()('sessions').where({ session_id: first.session_id }).update({ last_activity: db().raw(`now() - interval '2 hours'`) });
    const second = await json(await resolve(userId, '1 hour'), 200);
    expect(second.resumed).toBe(false);
    expect(second.session_id).not.toBe(first.session_id);
    const old = await db()('sessions').where({ session_id: first.session_id }).first();
    expect(old.status).toBe('closed');
    expect(old.closed_at).not.toBeNull();
    const ctx = await json(await api.request(`/api/sessions/${second.session_id}/context`), 200);
    expect(ctx.conversation_history).toEqual([]);
  });

  it('a per-call resume_window overrides the default window', async () => {
    const userId = await newUser(api);
    const first = await json(await resolve(userId), 200);
    await db()('sessions').where({ session_id: first.session_id }).update({ last_activity: db().raw(`now() - interval '3 days'`) });
    // The default (24 hours) would close it; a 7-day window resumes it.
    const resumed = await json(await resolve(userId, '7 days'), 200);
    expect(resumed).toMatchObject({ session_id: first.session_id, resumed: true });
    const stored = await json(await api.request(`/api/sessions/${first.session_id}`), 200);
    expect(stored.resume_window).toBe('24 hours');
  });

  it('a session created with a resume_window stores it', async () => {
    const userId = await newUser(api);
    const created = await json(await resolve(userId, '30 minutes'), 200);
    const stored = await json(await api.request(`/api/sessions/${created.session_id}`), 200);
    expect(stored.resume_window).toBe('30 minutes');
  });

  it('an invalid interval is a 400 naming resume_window', async () => {
    const userId = await newUser(api);
    for (const bad of ['soon', '24 fortnights', '']) {
      const res = await resolve(userId, bad || ' ');
      expect(res.status).toBe(400);
      expectFieldError(await res.json(), 'body.resume_window');
    }
  });

  it('an unknown user is a 404; a malformed user_id a 400', async () => {
    expect((await resolve('7d444840-9dc0-11d1-b245-5ffdce74fad2')).status).toBe(404);
    const bad = await resolve('nope');
    expect(bad.status).toBe(400);
    expectFieldError(await bad.json(), 'body.user_id');
  });

  it('concurrent resolves for one user never produce two live sessions', async () => {
    const userId = await newUser(api);
    const results = await Promise.all(Array.from({ length: 20 }, () => resolve(userId).then((r) => json(r, 200))));
    expect(new Set(results.map((r) => r.session_id)).size).toBe(1);
    expect(results.filter((r) => !r.resumed)).toHaveLength(1);
    const live = await db()('sessions').where({ user_id: userId }).whereNot({ status: 'closed' });
    expect(live).toHaveLength(1);
  });

  it('the database refuses a second live session for a user', async () => {
    const userId = await newUser(api);
    await json(await resolve(userId), 200);
    await expect(db()('sessions').insert({ user_id: userId, status: 'idle' })).rejects.toThrow(/sessions_one_live_per_user/);
    // A closed one does not count.
    await db()('sessions').insert({ user_id: userId, status: 'closed', closed_at: new Date() });
  });

  it('the expiry job closes exactly the sessions whose last_activity is at or before now minus their window', async () => {
    const [a, b] = [await newUser(api), await newUser(api)];
    const expired = await json(await resolve(a, '10 minutes'), 200);
    const fresh = await json(await resolve(b, '10 minutes'), 200);
    await db()('sessions').where({ session_id: expired.session_id }).update({ last_activity: db().raw(`now() - interval '11 minutes'`) });
    await db()('sessions').where({ session_id: fresh.session_id }).update({ last_activity: db().raw(`now() - interval '9 minutes'`) });
    const closed = await expireSessions();
    expect(closed).toContain(expired.session_id);
    expect(closed).not.toContain(fresh.session_id);
    const row = await db()('sessions').where({ session_id: expired.session_id }).first();
    expect(row).toMatchObject({ status: 'closed' });
    expect(row.closed_at).not.toBeNull();
    const audit = await db()('session_events').where({ session_id: expired.session_id, event_type: 'session_expired' });
    expect(audit).toHaveLength(1);
  });

  it('the scheduled tick enqueues the expiry job and a worker closes the expired sessions', async () => {
    const schedule = schedules().find((s) => s.job === 'sessions.expire');
    expect(schedule).toMatchObject({ cron: '* * * * *', enabled: true });
    const userId = await newUser(api);
    const s = await json(await resolve(userId, '5 minutes'), 200);
    await db()('sessions').where({ session_id: s.session_id }).update({ last_activity: db().raw(`now() - interval '6 minutes'`) });
    await tick(schedule!);
    await eventually(async () => (await db()('sessions').where({ session_id: s.session_id }).first()).status === 'closed', 5_000, 'the expired session to be closed');
  });

  it('sessions are removed with their user', async () => {
    const userId = await newUser(api);
    const s = await json(await resolve(userId), 200);
    await db()('users').where({ user_id: userId }).delete();
    expect(await db()('sessions').where({ session_id: s.session_id }).first()).toBeUndefined();
  });
});
