import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { db } from '../../shared/db/index.js';
import { eventually } from '../helpers/eventually.js';
import { extendWindow } from '../../shared/channels/chatapp/window.store.js';
import { subjectHash } from '../../shared/users/erasures.store.js';
import { expectFieldError, json, newInteraction, newSession, publish, randomPhone } from './helpers.js';
import { openRawStream, parseFrames } from '../helpers/sse.js';
import { commandRedis } from '../../shared/redis.js';
import { config } from '../../shared/config.js';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const count = async (table: string, where: Record<string, unknown>) => Number((await db()(table).where(where).count<{ n: string }[]>({ n: '*' }))[0]!.n);

describe('user changes, erasure and the session audit log', () => {
  it('a user is changed: E.164 and unique phone (409 naming the owner), email checked, the messaging-app window follows the number (the old one no longer applies, the new one starts closed)', async () => {
    const a = await json(await api.request('/api/users', { method: 'POST', json: { phone_number: randomPhone(), display_name: 'Ada' } }), 201);
    const b = await json(await api.request('/api/users', { method: 'POST', json: { phone_number: randomPhone() } }), 201);
    await extendWindow(a.user_id, a.phone_number);
    const phone = randomPhone();
    const changed = await json(await api.request(`/api/users/${a.user_id}`, { method: 'PATCH', json: { phone_number: phone, email: 'ada@example.com', display_name: null } }), 200);
    expect(changed).toEqual({ user_id: a.user_id, phone_number: phone, email: 'ada@example.com', display_name: null });
    expect(await count('chatapp_sessions', { user_id: a.user_id })).toBe(0);
    expect(await count('chatapp_sessions', { phone_number: phone })).toBe(0);
    const taken = await api.request(`/api/users/${a.user_id}`, { method: 'PATCH', json: { phone_number: b.phone_number } });
    expect(taken.status).toBe(409);
    expect(await taken.json()).toMatchObject({ user_id: b.user_id });
    const bad = await api.request(`/api/users/${a.user_id}`, { method: 'PATCH', json: { phone_number: '555-1234', email: 'x' } });
    expect(bad.status).toBe(400);
    const body = await bad.json();
    expectFieldError(body, 'body.phone_number');
    expectFieldError(body, 'body.email');
    expect((await api.request(`/api/users/${a.user_id}`, { method: 'PATCH', json: {} })).status).toBe(400);
    expect((await api.request('/api/users/7d444840-9dc0-11d1-b245-5ffdce74fad2', { method: 'PATCH', json: { email: 'a@b.example' } })).status).toBe(404);
  });

  it('the audit log of a session is readable, paged', async () => {
    const { sessionId } = await newSession(api);
    const interactionId = await newInteraction(api, sessionId, 'chat');
    for (let i = 0; i < 3; i++) expect((await publish(api, sessionId, { channel: 'chat', role: 'user', content: `m${i}`, interaction_id: interactionId })).ok).toBe(true);
    const all = await eventually(async () => {
      const page = await json(await api.request(`/api/sessions/${sessionId}/audit?limit=500`), 200);
      return page.items.filter((e: { event_type: string }) => e.event_type === 'message_published').length === 3 && page;
    });
    expect(all.items[0].event_type).toBe('session_created');
    const second = await json(await api.request(`/api/sessions/${sessionId}/audit?limit=2&offset=2`), 200);
    expect(second).toMatchObject({ total: all.total, limit: 2, offset: 2 });
    expect(second.items.map((e: { event_id: string }) => e.event_id)).toEqual(all.items.slice(2, 4).map((e: { event_id: string }) => e.event_id));
    expect((await api.request('/api/sessions/7d444840-9dc0-11d1-b245-5ffdce74fad2/audit')).status).toBe(404);
  });

  it('erasing a user removes sessions, messages, events, consents and messaging-app records in one go; an audit row without personal data stays', async () => {
    const { userId, sessionId } = await newSession(api);
    const user = await json(await api.request(`/api/users/${userId}`), 200);
    const interactionId = await newInteraction(api, sessionId, 'chatapp', user.phone_number);
    await publish(api, sessionId, { channel: 'chatapp', role: 'user', content: 'my secret', interaction_id: interactionId });
    await eventually(async () => (await count('session_messages', { session_id: sessionId })) === 1);
    await api.request(`/api/users/${userId}/consents/chatapp`, { method: 'PUT', json: { opted_in: true } });
    await extendWindow(userId, user.phone_number);
    // An inbound message recorded before the number was linked to the user.
    await db()('chatapp_messages').insert({ direction: 'inbound', user_id: null, phone_number: user.phone_number, kind: 'text', body: 'hello', status: 'received', provider_message_id: `SM${Date.now()}` });

    const res = await api.request(`/api/users/${userId}?by=dpo@example.com`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    const erasure = await res.json();
    expect(erasure).toMatchObject({ subject_hash: subjectHash(userId), requested_by: 'dpo@example.com', erased: { users: 1, sessions: 1, session_messages: 1, channel_consents: 1, chatapp_sessions: 1, chatapp_messages: 1 } });
    expect(erasure.erased.session_events).toBeGreaterThan(0);
    for (const [table, where] of [
      ['users', { user_id: userId }], ['sessions', { user_id: userId }], ['session_messages', { session_id: sessionId }], ['session_events', { session_id: sessionId }],
      ['channel_consents', { user_id: userId }], ['chatapp_sessions', { phone_number: user.phone_number }], ['chatapp_messages', { phone_number: user.phone_number }],
    ] as const) expect(await count(table, where), table).toBe(0);
    // The audit row names no one: no id, phone, name or message text.
    const row = JSON.stringify(await db()('user_erasures').where({ erasure_id: erasure.erasure_id }).first());
    for (const secret of [userId, user.phone_number, 'my secret', 'Test']) expect(row).not.toContain(secret);
    expect((await api.request(`/api/users/${userId}`, { method: 'DELETE' })).status).toBe(404);
    expect((await api.request(`/api/sessions/${sessionId}`)).status).toBe(404);
  });

  it('erasing a user also deletes their idempotency claims in Redis and ends their open streams with a final event', async () => {
    const { userId, sessionId } = await newSession(api);
    const interactionId = await newInteraction(api, sessionId, 'chat');
    const other = await newSession(api);
    for (const [s, i] of [[sessionId, interactionId], [other.sessionId, await newInteraction(api, other.sessionId, 'chat')]] as const) {
      expect((await publish(api, s, { channel: 'chat', role: 'user', content: 'keyed', interaction_id: i }, { 'Idempotency-Key': 'order-17' })).ok).toBe(true);
    }
    const claims = async (s: string) => (await commandRedis('test').keys(`${config().queues.prefix}:sessions:idem:${s}:*`)).length;
    expect(await claims(sessionId)).toBe(1);
    const voice = await openRawStream(api, sessionId, 'voice');
    const chat = await openRawStream(api, sessionId, 'chat');

    expect((await api.request(`/api/users/${userId}`, { method: 'DELETE' })).status).toBe(200);
    // Both streams end; the final event is the close (its own channel gets only the id, as on a close).
    expect(await voice.ended).toBe(true);
    expect(await chat.ended).toBe(true);
    const last = parseFrames(voice.text()).at(-1)!;
    expect(last.data).toEqual({ event_type: 'CONTEXT_UPDATE', session_id: sessionId, channel: 'chat', data: { session_status: 'closed', reason: 'user_erased' } });
    expect(parseFrames(chat.text()).at(-1)).toEqual({ id: last.id, data: null });
    expect(await claims(sessionId)).toBe(0);
    // Another user's claim stays.
    expect(await claims(other.sessionId)).toBe(1);
    expect((await openRawStream(api, sessionId, 'voice')).status).toBe(404);
  });
});
