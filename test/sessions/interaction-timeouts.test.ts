import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { db } from '../../shared/db/index.js';
import { extendWindow } from '../../shared/channels/chatapp/window.store.js';
import { endTimedOutInteractions } from '../../shared/sessions/interactions.js';
import { eventually } from '../helpers/eventually.js';
import { json, newInteraction, newSession } from './helpers.js';

process.env.WEBCHAT_IDLE_SECONDS = '60';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const interaction = async (id: string) => db()('session_interactions').where({ interaction_id: id }).first();
const channelLeft = (sessionId: string) =>
  db()('session_events').where({ session_id: sessionId }).whereNotNull('sequence').whereRaw(`payload->>'event_type' = 'CHANNEL_LEFT'`).select('payload');

describe('channel interactions end by themselves', () => {
  it('a chatapp interaction ends when the 24-hour window closes, a web chat one after WEBCHAT_IDLE_SECONDS; CHANNEL_LEFT says why; the session goes idle', async () => {
    const { userId, sessionId } = await newSession(api);
    const user = await json(await api.request(`/api/users/${userId}`), 200);
    const chatapp = await newInteraction(api, sessionId, 'chatapp', user.phone_number);
    const chat = await newInteraction(api, sessionId, 'chat');
    await extendWindow(userId, user.phone_number);
    // Both still live: the window is open, the chat just started.
    expect(await endTimedOutInteractions()).toBe(0);

    await db()('chatapp_sessions').where({ phone_number: user.phone_number }).update({ window_expires_at: db().raw(`now() - interval '1 second'`) });
    expect(await endTimedOutInteractions()).toBe(1);
    expect(await interaction(chatapp)).toMatchObject({ status: 'closed' });
    expect(await interaction(chat)).toMatchObject({ status: 'active' });
    expect((await json(await api.request(`/api/sessions/${sessionId}`), 200)).status).toBe('active');

    await db()('session_interactions').where({ interaction_id: chat }).update({ started_at: db().raw(`now() - interval '2 minutes'`) });
    expect(await endTimedOutInteractions()).toBe(1);
    expect(await interaction(chat)).toMatchObject({ status: 'closed' });
    expect((await json(await api.request(`/api/sessions/${sessionId}`), 200)).status).toBe('idle');

    const left = await eventually(async () => {
      const rows = await channelLeft(sessionId);
      return rows.length === 2 && rows;
    });
    expect(left.map((r: { payload: { channel: string; data: { reason: string } } }) => [r.payload.channel, r.payload.data.reason]).sort()).toEqual([
      ['chat', 'idle_timeout'],
      ['chatapp', 'customer_window_closed'],
    ]);
    expect(await endTimedOutInteractions()).toBe(0);
  });

  it('a web chat interaction with a recent message stays open', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    await db()('session_interactions').where({ interaction_id: chat }).update({ started_at: db().raw(`now() - interval '10 minutes'`) });
    expect((await api.request(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { channel: 'chat', role: 'user', content: 'still here', interaction_id: chat } })).ok).toBe(true);
    await eventually(async () => (await db()('session_messages').where({ interaction_id: chat })).length === 1);
    await endTimedOutInteractions();
    expect(await interaction(chat)).toMatchObject({ status: 'active' });
  });
});
