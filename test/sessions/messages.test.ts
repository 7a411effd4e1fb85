import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../shared/db/index.js';
import { acceptMessage } from '../../shared/stream/index.js';
import { getContext } from '../../shared/sessions/context.js';
import { eventually } from '../helpers/eventually.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { expectFieldError, json, newInteraction, newSession, publish } from './helpers.js';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const message = (interactionId: string, content: string, extra: Record<string, unknown> = {}) => ({ channel: 'chat', role: 'user', content, interaction_id: interactionId, ...extra });

describe('publishing messages', () => {
  it('POST answers once persisted and published, with the message id and sequence', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const res = await publish(api, sessionId, message(chat, 'hello', { metadata: { k: 'v' } }));
    const body = await json(res, 200);
    expect(body).toMatchObject({ success: true, session_id: sessionId, message_published: true });
    expect(body.message_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.sequence).toBeGreaterThan(0);
    const ctx = await json(await api.request(`/api/sessions/${sessionId}/context`), 200);
    expect(ctx).toMatchObject({ conversation_history: [{ role: 'user', content: 'hello', channel: 'chat' }], last_channel: 'chat', preferences: {}, custom_data: {} });
    const audit = await db()('session_events').where({ session_id: sessionId, event_type: 'message_published' });
    expect(audit).toHaveLength(1);
    expect(audit[0].payload).toMatchObject({ event_type: 'MESSAGE', channel: 'chat', data: { role: 'user', content: 'hello', metadata: { k: 'v' }, message_id: body.message_id, sequence: body.sequence } });
  });

  it('a persisted message refreshes last_activity', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    await db()('sessions').where({ session_id: sessionId }).update({ last_activity: db().raw(`now() - interval '5 hours'`) });
    await json(await publish(api, sessionId, message(chat, 'ping')), 200);
    const row = await db()('sessions').where({ session_id: sessionId }).first();
    expect(Date.now() - new Date(row.last_activity).getTime()).toBeLessThan(60_000);
  });

  it('the history is trimmed to SERVICE_SESSION_MAX_HISTORY, keeping the latest in order', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    for (let i = 0; i < 55; i++) await json(await publish(api, sessionId, message(chat, `m${i}`)), 200);
    const ctx = await getContext(sessionId);
    expect(ctx.conversation_history.map((m) => m.content)).toEqual(Array.from({ length: 50 }, (_, i) => `m${i + 5}`));
    expect(await db()('session_messages').where({ session_id: sessionId }).count('* as n').first()).toMatchObject({ n: 50 });
  });

  it('an Idempotency-Key repeat returns the first result and publishes nothing more', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const first = await json(await publish(api, sessionId, message(chat, 'once'), { 'Idempotency-Key': 'k-1' }), 200);
    const repeats = await Promise.all(Array.from({ length: 5 }, () => publish(api, sessionId, message(chat, 'once'), { 'Idempotency-Key': 'k-1' })));
    for (const r of repeats) {
      expect(r.headers.get('idempotent-replayed')).toBe('true');
      expect(await json(r, 200)).toMatchObject({ message_id: first.message_id, sequence: first.sequence, message_published: true });
    }
    expect((await getContext(sessionId)).conversation_history).toHaveLength(1);
  });

  it('concurrent repeats of one Idempotency-Key add exactly one message', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const results = await Promise.all(Array.from({ length: 10 }, () => publish(api, sessionId, message(chat, 'dup'), { 'Idempotency-Key': 'same' }).then((r) => r.json())));
    expect(new Set(results.map((r) => r.message_id)).size).toBe(1);
    // The session's events are delivered in acceptance order: a second 'dup' would land before the marker.
    await json(await publish(api, sessionId, message(chat, 'marker')), 200);
    expect((await getContext(sessionId)).conversation_history.map((m) => m.content)).toEqual(['dup', 'marker']);
  });

  it('a delivery job run twice persists and audits the message once, and publishes it again with the same sequence', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const { deliverLaneJob } = await import('../../shared/stream/persist.js');
    const { subscribeSession } = await import('../../shared/bus.js');
    const job = { kind: 'message' as const, session_id: sessionId, message_id: crypto.randomUUID(), channel: 'chat' as const, role: 'user' as const, content: 'retry me', interaction_id: chat, metadata: {}, idempotency_key: null };
    const seen: number[] = [];
    const leave = await subscribeSession(sessionId, (e) => { if (e.id === job.message_id) seen.push(e.sequence); });
    expect(await deliverLaneJob([job])).toEqual({ published: 1, parked: 0 });
    expect(await deliverLaneJob([job])).toEqual({ published: 1, parked: 0 });
    await eventually(() => seen.length === 2);
    leave();
    expect(seen[0]).toBe(seen[1]);
    expect(await db()('session_messages').where({ session_id: sessionId })).toHaveLength(1);
    expect(await db()('session_events').where({ session_id: sessionId, event_type: 'message_published' })).toHaveLength(1);
  });

  it('publishing to a closed session is a 409', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    await json(await api.request(`/api/sessions/${sessionId}/close`, { method: 'POST' }), 200);
    const res = await publish(api, sessionId, message(chat, 'too late'));
    expect(res.status).toBe(409);
    expect((await res.json()).title).toBe('Conflict');
  });

  it('a session closed or deleted by another request refuses the next message: 409 / 404, nothing persisted, its Idempotency-Key not taken', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    await json(await publish(api, sessionId, message(chat, 'first')), 200);
    // As another process (or expiry) would: the row changes, this process hears nothing.
    await db()('sessions').where({ session_id: sessionId }).update({ status: 'closed', closed_at: db().fn.now() });
    const refused = await json(await publish(api, sessionId, message(chat, 'late'), { 'Idempotency-Key': 'late-1' }), 409);
    expect(refused).toMatchObject({ title: 'Conflict', status: 409, current_status: 'closed', allowed_next_states: [] });
    expect((await db()('session_messages').where({ session_id: sessionId })).map((m: { content: string }) => m.content)).toEqual(['first']);
    // Answered from the database now, and the key was not kept for the refused message.
    await json(await publish(api, sessionId, message(chat, 'again'), { 'Idempotency-Key': 'late-1' }), 409);

    const other = await newSession(api);
    const sms = await newInteraction(api, other.sessionId, 'sms');
    await json(await publish(api, other.sessionId, { ...message(sms, 'hello'), channel: 'sms' }), 200);
    await db()('session_interactions').where({ session_id: other.sessionId }).delete();
    await db()('session_messages').where({ session_id: other.sessionId }).delete();
    await db()('session_events').where({ session_id: other.sessionId }).delete();
    await db()('sessions').where({ session_id: other.sessionId }).delete();
    await json(await publish(api, other.sessionId, { ...message(sms, 'gone'), channel: 'sms' }), 404);
  });

  it('unknown session or interaction is a 404; bad channel, role, UUID or body a 400 naming the field', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    expect((await publish(api, '7d444840-9dc0-11d1-b245-5ffdce74fad2', message(chat, 'x'))).status).toBe(404);
    expect((await publish(api, sessionId, message('7d444840-9dc0-11d1-b245-5ffdce74fad2', 'x'))).status).toBe(404);
    const bad = await publish(api, sessionId, { channel: 'Fax!', role: 'robot', content: '', interaction_id: 'nope' });
    expect(bad.status).toBe(400);
    const body = await bad.json();
    for (const f of ['body.channel', 'body.role', 'body.content', 'body.interaction_id']) expectFieldError(body, f);
    const badId = await publish(api, 'not-a-uuid', message(chat, 'x'));
    expect(badId.status).toBe(400);
    expectFieldError(await badId.json(), 'params.session_id');
    expect((await api.request(`/api/sessions/7d444840-9dc0-11d1-b245-5ffdce74fad2/context`)).status).toBe(404);
  });

  it('without a bounded wait acceptance returns at once and the message is still persisted', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const accepted = await acceptMessage(sessionId, { channel: 'chat', role: 'assistant', content: 'later', interaction_id: chat });
    expect(accepted).toMatchObject({ message_published: false, sequence: null });
    const history = await eventually(async () => {
      const h = (await getContext(sessionId)).conversation_history;
      return h.length > 0 && h;
    }, 10_000, 'the message accepted without waiting in the history');
    expect(history).toEqual([{ role: 'assistant', content: 'later', channel: 'chat' }]);
  });

  it('non-message events are published in the stream and audited; CONTEXT_UPDATE changes the context', async () => {
    const { sessionId } = await newSession(api);
    const typing = await json(await api.request(`/api/sessions/${sessionId}/events`, { method: 'POST', json: { event_type: 'TYPING', channel: 'chat', data: { is_typing: true } } }), 200);
    expect(typing).toMatchObject({ success: true, event_type: 'TYPING', published: true });
    await json(await api.request(`/api/sessions/${sessionId}/events`, { method: 'POST', json: { event_type: 'CONTEXT_UPDATE', channel: 'voice', data: { preferences: { language: 'de' } } } }), 200);
    await json(await api.request(`/api/sessions/${sessionId}/events`, { method: 'POST', json: { event_type: 'CONTEXT_UPDATE', channel: 'voice', data: { preferences: { tone: 'brief' }, custom_data: { plan: 'pro' } } } }), 200);
    const ctx = await getContext(sessionId);
    expect(ctx.preferences).toEqual({ language: 'de', tone: 'brief' });
    expect(ctx.custom_data).toEqual({ plan: 'pro' });
    const types = (await db()('session_events').where({ session_id: sessionId }).whereNotNull('sequence').orderBy('sequence')).map((e) => e.event_type);
    expect(types).toEqual(['typing', 'context_update', 'context_update']);
    const bad = await api.request(`/api/sessions/${sessionId}/events`, { method: 'POST', json: { event_type: 'TOOL_CALL', channel: 'chat', data: {} } });
    expect(bad.status).toBe(400);
    expectFieldError(await bad.json(), 'body.data.tool_name');
    const msg = await api.request(`/api/sessions/${sessionId}/events`, { method: 'POST', json: { event_type: 'MESSAGE', channel: 'chat', data: {} } });
    expect(msg.status).toBe(400);
  });
});
