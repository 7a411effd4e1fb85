import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../shared/db/index.js';
import { getContext } from '../../shared/sessions/context.js';
import { unsyncedEntries } from '../../shared/sessions/interactions.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { expectFieldError, json, newInteraction, newSession, publish } from './helpers.js';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const close = (interactionId: string, body: unknown = {}) => api.request(`/api/sessions/interactions/${interactionId}/close`, { method: 'POST', json: body });
const status = async (sessionId: string) => (await db()('sessions').where({ session_id: sessionId }).first()).status;

describe('interactions', () => {
  it('attaching returns the interaction; several may be active at once', async () => {
    const { sessionId } = await newSession(api);
    const res = await api.request(`/api/sessions/${sessionId}/interactions`, { method: 'POST', json: { channel: 'voice', channel_ref: 'CA123', metadata: { caller: 'x' } } });
    const voice = await json(res, 201);
    expect(voice).toMatchObject({ session_id: sessionId, channel: 'voice', status: 'active', channel_ref: 'CA123', metadata: { caller: 'x' } });
    expect(voice.started_at).toBeTruthy();
    await newInteraction(api, sessionId, 'chat');
    await newInteraction(api, sessionId, 'sms');
    const detail = await json(await api.request(`/api/sessions/${sessionId}`), 200);
    expect(detail.interactions.filter((i: { status: string }) => i.status === 'active')).toHaveLength(3);
  });

  it('closing the last active interaction makes the session idle; a new interaction makes it active again', async () => {
    const { sessionId } = await newSession(api);
    const [a, b] = [await newInteraction(api, sessionId, 'voice'), await newInteraction(api, sessionId, 'chat')];
    expect(await json(await close(a), 200)).toMatchObject({ status: 'closed', session_status: 'active' });
    const last = await json(await close(b), 200);
    expect(last).toMatchObject({ interaction_id: b, status: 'closed', session_status: 'idle', synced_messages: 0 });
    expect(last.ended_at).toBeTruthy();
    expect(await status(sessionId)).toBe('idle');
    await newInteraction(api, sessionId, 'sms');
    expect(await status(sessionId)).toBe('active');
  });

  it('final_history on close is synced into the history without repeating what was already published', async () => {
    const { sessionId } = await newSession(api);
    const voice = await newInteraction(api, sessionId, 'voice');
    await json(await publish(api, sessionId, { channel: 'voice', role: 'user', content: 'book a table', interaction_id: voice }), 200);
    const closed = await json(
      await close(voice, {
        final_history: [
          { role: 'user', content: 'book a table' },
          { role: 'assistant', content: 'for how many?' },
          { role: 'user', content: 'two' },
        ],
      }),
      200,
    );
    expect(closed.synced_messages).toBe(2);
    const ctx = await getContext(sessionId);
    expect(ctx.conversation_history).toEqual([
      { role: 'user', content: 'book a table', channel: 'voice' },
      { role: 'assistant', content: 'for how many?', channel: 'voice' },
      { role: 'user', content: 'two', channel: 'voice' },
    ]);
  });

  it('writes the audit rows of an interaction: started, channel_joined, history_synced, interaction_ended, channel_left', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    await json(await close(chat, { final_history: [{ role: 'user', content: 'hi' }] }), 200);
    const rows = await db()('session_events').where({ session_id: sessionId }).whereNot({ event_type: 'session_created' }).orderBy('timestamp');
    const types = rows.map((r) => r.event_type);
    for (const t of ['interaction_started', 'channel_joined', 'interaction_ended', 'message_published', 'history_synced', 'channel_left']) expect(types).toContain(t);
    expect(rows.find((r) => r.event_type === 'history_synced')!.payload).toEqual({ received: 1, appended: 1 });
    expect(rows.filter((r) => r.event_type !== 'message_published').every((r) => r.interaction_id === chat)).toBe(true);
  });

  it('an unknown interaction is a 404; closing a closed one a 409; bad final_history a 400', async () => {
    const { sessionId } = await newSession(api);
    expect((await close('7d444840-9dc0-11d1-b245-5ffdce74fad2')).status).toBe(404);
    const chat = await newInteraction(api, sessionId, 'chat');
    const bad = await close(chat, { final_history: [{ role: 'robot', content: 1 }] });
    expect(bad.status).toBe(400);
    expectFieldError(await bad.json(), 'body.final_history.0.role');
    await json(await close(chat), 200);
    const again = await close(chat);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ allowed_next_states: [] });
  });

  it('attaching to an unknown session is a 404, to a closed one a 409, with a bad channel a 400', async () => {
    expect((await api.request('/api/sessions/7d444840-9dc0-11d1-b245-5ffdce74fad2/interactions', { method: 'POST', json: { channel: 'chat' } })).status).toBe(404);
    const { sessionId } = await newSession(api);
    const bad = await api.request(`/api/sessions/${sessionId}/interactions`, { method: 'POST', json: { channel: 'Pigeon Post' } });
    expect(bad.status).toBe(400);
    expectFieldError(await bad.json(), 'body.channel');
    await json(await api.request(`/api/sessions/${sessionId}/close`, { method: 'POST', json: { reason: 'done' } }), 200);
    expect((await api.request(`/api/sessions/${sessionId}/interactions`, { method: 'POST', json: { channel: 'chat' } })).status).toBe(409);
  });

  it('explicit close ends the session and its interactions; closing again is a 409', async () => {
    const { sessionId, userId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const closed = await json(await api.request(`/api/sessions/${sessionId}/close`, { method: 'POST' }), 200);
    expect(closed).toMatchObject({ session_id: sessionId, status: 'closed' });
    expect(closed.closed_at).toBeTruthy();
    expect((await db()('session_interactions').where({ interaction_id: chat }).first()).status).toBe('closed');
    expect((await api.request(`/api/sessions/${sessionId}/close`, { method: 'POST' })).status).toBe(409);
    const list = await json(await api.request(`/api/sessions?user_id=${userId}&limit=5`), 200);
    expect(list.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([sessionId]);
  });

  it('listing sessions needs a known user and a sane limit', async () => {
    expect((await api.request('/api/sessions?user_id=7d444840-9dc0-11d1-b245-5ffdce74fad2')).status).toBe(404);
    const bad = await api.request('/api/sessions?user_id=x&limit=1000');
    expect(bad.status).toBe(400);
    const body = await bad.json();
    expectFieldError(body, 'query.user_id');
    expectFieldError(body, 'query.limit');
  });

  it('a final transcript entry counts as published once per equal published message', () => {
    const published = [{ role: 'user', content: 'yes' }];
    expect(unsyncedEntries([{ role: 'user', content: 'yes' }, { role: 'user', content: 'yes' }], published)).toEqual([{ role: 'user', content: 'yes' }]);
  });
});
