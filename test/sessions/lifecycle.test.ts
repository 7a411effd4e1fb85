/**
 * Session lifecycle at the edges: a replaced or swept session ends its
 * interactions with CHANNEL_LEFT; joining refreshes last_activity; a session past its window
 * cannot be revived by joining it before the sweep runs.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../shared/db/index.js';
import { expireSessions } from '../../shared/sessions/resolve.js';
import { eventually } from '../helpers/eventually.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { json, newInteraction, newSession } from './helpers.js';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const age = (sessionId: string, minutes: number) =>
  db()('sessions').where({ session_id: sessionId }).update({ resume_window: '10 minutes', last_activity: db().raw(`now() - make_interval(mins => ?)`, [minutes]) });
const interactionStatus = async (id: string) => (await db()('session_interactions').where({ interaction_id: id }).first()).status;
/** The CHANNEL_LEFT events persisted in the session's stream, by interaction id. */
const leftEvents = async (sessionId: string) =>
  (await db()('session_events').where({ session_id: sessionId, event_type: 'channel_left' }).whereNotNull('sequence')).map((e: { payload: { data: { interaction_id: string } } }) => e.payload.data.interaction_id);

describe('session lifecycle', () => {
  it('replacing an expired session ends its interactions with CHANNEL_LEFT', async () => {
    const { userId, sessionId } = await newSession(api);
    const voice = await newInteraction(api, sessionId, 'voice');
    await age(sessionId, 11);
    const next = await json(await api.request('/api/sessions/resolve', { method: 'POST', json: { user_id: userId } }), 200);
    expect(next.session_id).not.toBe(sessionId);
    expect(await interactionStatus(voice)).toBe('closed');
    expect(await eventually(async () => ((await leftEvents(sessionId)).includes(voice) ? true : null))).toBe(true);
  });

  it('the expiry sweep ends the interactions of the sessions it closes with CHANNEL_LEFT', async () => {
    const { sessionId } = await newSession(api);
    const [voice, chat] = [await newInteraction(api, sessionId, 'voice'), await newInteraction(api, sessionId, 'chat')];
    await age(sessionId, 11);
    expect(await expireSessions()).toContain(sessionId);
    expect([await interactionStatus(voice), await interactionStatus(chat)]).toEqual(['closed', 'closed']);
    const left = await eventually(async () => {
      const ids = await leftEvents(sessionId);
      return ids.length === 2 ? ids : null;
    });
    expect(left.sort()).toEqual([voice, chat].sort());
    const audit = await db()('session_events').where({ session_id: sessionId, event_type: 'interaction_ended' });
    expect(audit).toHaveLength(2);
  });

  it('starting an interaction refreshes last_activity, so the sweep does not close the session mid-call', async () => {
    const { sessionId } = await newSession(api);
    await age(sessionId, 9);
    await newInteraction(api, sessionId, 'voice');
    const row = await db()('sessions').where({ session_id: sessionId }).select(db().raw(`now() - last_activity < interval '1 minute' as fresh`)).first();
    expect(row.fresh).toBe(true);
    await db()('sessions').where({ session_id: sessionId }).update({ last_activity: db().raw(`last_activity - interval '2 minutes'`) });
    expect(await expireSessions()).not.toContain(sessionId);
  });

  it('an idle session past its window cannot be revived by starting an interaction before the sweep', async () => {
    const { sessionId } = await newSession(api);
    const first = await newInteraction(api, sessionId, 'voice');
    expect((await api.request(`/api/sessions/interactions/${first}/close`, { method: 'POST', json: {} })).status).toBe(200);
    expect((await db()('sessions').where({ session_id: sessionId }).first()).status).toBe('idle');
    await age(sessionId, 11);
    const res = await api.request(`/api/sessions/${sessionId}/interactions`, { method: 'POST', json: { channel: 'chat' } });
    expect(res.status).toBe(409);
    const row = await db()('sessions').where({ session_id: sessionId }).first();
    expect(row.status).toBe('closed');
    expect(row.closed_at).not.toBeNull();
    expect(await db()('session_interactions').where({ session_id: sessionId, channel: 'chat' })).toHaveLength(0);
  });
});
