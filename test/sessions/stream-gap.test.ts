/**
 * Live events the bus lost: sequences of a session are contiguous, so a stream
 * that receives an event beyond the next one fills the gap from Postgres before writing it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { db } from '../../shared/db/index.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { subscribe, type Subscriber } from '../helpers/sse.js';
import { json, newInteraction, newSession } from './helpers.js';

let api: Platform;
const open: Subscriber[] = [];
beforeAll(async () => {
  api = await startPlatform();
});
afterAll(() => open.forEach((s) => s.close()));

describe('a gap in the live stream', () => {
  it('is filled from Postgres: an event persisted but never published reaches the subscriber, in order', async () => {
    const { sessionId } = await newSession(api);
    await newInteraction(api, sessionId, 'chat');
    const voice = subscribe(api.url, sessionId, 'voice');
    open.push(voice);
    await voice.opened;
    // An event written to the stream whose publish was lost (Redis restarted between commit and PUBLISH).
    const lost = await db().transaction(async (trx) => {
      const [{ last_seq }] = await trx('sessions').where({ session_id: sessionId }).increment('last_seq', 1).returning('last_seq');
      const envelope = { event_type: 'TYPING', session_id: sessionId, channel: 'chat', data: { is_typing: true, lost: true } };
      await trx('session_events').insert({ event_id: randomUUID(), session_id: sessionId, event_type: 'typing', payload: JSON.stringify(envelope), sequence: last_seq });
      return Number(last_seq);
    });
    // The next event goes the normal way (persisted at lost + 1, then published).
    await json(await api.request(`/api/sessions/${sessionId}/events`, { method: 'POST', json: { event_type: 'TYPING', channel: 'chat', data: { is_typing: false } } }), 200);
    const got = await voice.next((e) => e.id === lost + 1);
    const ids = voice.events.map((e) => e.id);
    expect(ids).toContain(lost);
    expect(ids.indexOf(lost)).toBeLessThan(ids.indexOf(got.id));
    expect(voice.events.find((e) => e.id === lost)!.data).toMatchObject({ lost: true });
  });
});
