import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { openRawStream, parseFrames } from '../helpers/sse.js';
import { expireSessions } from '../../shared/sessions/resolve.js';
import { db } from '../../shared/db/index.js';
import { newInteraction, newSession } from './helpers.js';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const openStream = (sessionId: string, channel: string, lastEventId?: number) => openRawStream(api, sessionId, channel, lastEventId);

describe('closing a session ends its streams', () => {
  it('open streams get CHANNEL_LEFT for the ended interactions and a final CONTEXT_UPDATE, then end; a later open is a 409', async () => {
    const { sessionId } = await newSession(api);
    const interactionId = await newInteraction(api, sessionId, 'chat');
    const voice = await openStream(sessionId, 'voice');
    const closed = await api.request(`/api/sessions/${sessionId}/close`, { method: 'POST', json: { reason: 'user left' } });
    expect(closed.status).toBe(200);
    expect(await voice.ended).toBe(true);
    const frames = parseFrames(voice.text());
    expect(frames.map((f) => [f.data?.event_type, f.data?.data])).toEqual([
      ['CHANNEL_LEFT', { interaction_id: interactionId }],
      ['CONTEXT_UPDATE', { session_status: 'closed', reason: 'user left' }],
    ]);
    // Nothing to replay past the final event, and nothing live will come.
    expect((await openStream(sessionId, 'voice')).status).toBe(409);
    expect((await openStream(sessionId, 'voice', frames.at(-1)!.id!)).status).toBe(409);
    // An earlier Last-Event-ID replays up to the final event and ends.
    const replay = await openStream(sessionId, 'voice', 0);
    expect(await replay.ended).toBe(true);
    expect(parseFrames(replay.text()).at(-1)!.data).toMatchObject({ event_type: 'CONTEXT_UPDATE', data: { session_status: 'closed' } });
  });

  it('a subscriber on the final event\'s own channel gets only its id, and its stream ends too', async () => {
    const { sessionId } = await newSession(api);
    const chat = await openStream(sessionId, 'chat');
    await api.request(`/api/sessions/${sessionId}/close`, { method: 'POST', json: {} });
    expect(await chat.ended).toBe(true);
    expect(parseFrames(chat.text())).toEqual([{ id: expect.any(Number), data: null }]);
  });

  it('expiry closes the session and ends its streams with the final event', async () => {
    const { sessionId } = await newSession(api);
    const voice = await openStream(sessionId, 'voice');
    await db()('sessions').where({ session_id: sessionId }).update({ last_activity: db().raw(`now() - interval '2 days'`) });
    expect(await expireSessions()).toContain(sessionId);
    expect(await voice.ended).toBe(true);
    expect(parseFrames(voice.text()).at(-1)!.data).toMatchObject({ event_type: 'CONTEXT_UPDATE', data: { session_status: 'closed', reason: 'expired' } });
  });
});
