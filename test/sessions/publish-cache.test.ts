import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../shared/db/index.js';
import { waitForPublished } from '../../shared/sessions/publish.js';
import { startPlatform, testApiKey, type Platform } from '../helpers/platform.js';
import { subscribe } from '../helpers/sse.js';
import { json, newInteraction, newSession, publish } from './helpers.js';

let api: Platform;
beforeAll(async () => {
  // A short wait, so a message accepted while Postgres is locked answers 202 instead of waiting 2 s.
  process.env.SESSION_PUBLISH_WAIT_MS = '300';
  api = await startPlatform();
});

/**
 * Holds an exclusive lock on the sessions table (nothing can read it) while `during` runs: a POST
 * that asks Postgres whether the session is live waits for the lock; one answered from the cache
 * does not.
 */
async function withSessionsLocked<T>(during: () => Promise<T>): Promise<T> {
  const trx = await db().transaction();
  try {
    await trx.raw('lock table sessions in access exclusive mode');
    return await during();
  } finally {
    await trx.rollback();
  }
}

describe('the publish check of a streamed session', () => {
  it('a session a channel streams is known live: its first message is accepted without asking Postgres, and still persisted', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const voice = subscribe(api.url, sessionId, 'voice', { apiKey: testApiKey });
    try {
      await voice.opened;
      // The stream fills the cache without delaying its opening; give that query its moment.
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      const body = await withSessionsLocked(async () => json(await publish(api, sessionId, { channel: 'chat', role: 'user', content: 'first of the session', interaction_id: chat }), 202));
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(body).toMatchObject({ session_id: sessionId, message_published: false });
      expect(await waitForPublished(sessionId, body.message_id, 10_000)).toBeGreaterThan(0);
    } finally {
      voice.close();
    }
  });

  it('a session nobody streams is checked in Postgres (the POST waits for the lock)', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const { pending } = await withSessionsLocked(async () => {
      const pending = publish(api, sessionId, { channel: 'chat', role: 'user', content: 'checked', interaction_id: chat });
      const first = await Promise.race([pending.then(() => 'answered' as const), new Promise<'waiting'>((r) => setTimeout(() => r('waiting'), 800))]);
      expect(first).toBe('waiting');
      // Handed out unawaited: the POST can answer only once the lock is gone.
      return { pending };
    });
    expect([200, 202]).toContain((await pending).status);
  });

  it('an interaction created after the stream opened is still checked, and one of another session is refused', async () => {
    const { sessionId } = await newSession(api);
    const other = await newSession(api);
    const foreign = await newInteraction(api, other.sessionId, 'sms');
    const voice = subscribe(api.url, sessionId, 'voice', { apiKey: testApiKey });
    try {
      await voice.opened;
      await new Promise((r) => setTimeout(r, 200));
      const later = await newInteraction(api, sessionId, 'chat');
      expect((await publish(api, sessionId, { channel: 'chat', role: 'user', content: 'later', interaction_id: later })).status).toBe(200);
      const refused = await json(await publish(api, sessionId, { channel: 'sms', role: 'user', content: 'foreign', interaction_id: foreign }), 404);
      expect(refused.errors?.[0]?.path).toBe('body.interaction_id');
    } finally {
      voice.close();
    }
  });
});
