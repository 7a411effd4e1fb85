import { beforeAll, describe, expect, it } from 'vitest';
import { waitForPublished } from '../../shared/stream/index.js';
import { getContext } from '../../shared/sessions/context.js';
import { startPlatform, testApiKey, type Platform } from '../helpers/platform.js';
import { json, newInteraction, newSession, publish } from './helpers.js';
import { subscribe } from '../helpers/sse.js';

let api: Platform;
beforeAll(async () => {
  // No time to wait: every POST answers before the worker has persisted and published.
  process.env.SESSION_PUBLISH_WAIT_MS = '0';
  api = await startPlatform();
});

describe('the bounded wait of POST messages', () => {
  it('past the wait the answer is 202 with message_published false, and the message is still persisted and delivered', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const watcher = subscribe(api.url, sessionId, 'voice', { apiKey: testApiKey });
    try {
      await watcher.opened;
      const body = await json(await publish(api, sessionId, { channel: 'chat', role: 'user', content: 'eventually', interaction_id: chat }), 202);
      expect(body).toMatchObject({ success: true, session_id: sessionId, message_published: false, sequence: null });
      const sequence = await waitForPublished(sessionId, body.message_id, 10_000);
      expect(sequence).toBeGreaterThan(0);
      // The chat interaction's CHANNEL_JOINED is not awaited either (the wait is 0), so it may reach the watcher first.
      let events = await watcher.waitFor(1);
      if (events[0]!.event_type === 'CHANNEL_JOINED') events = await watcher.waitFor(2);
      expect(events.map((e) => e.event_type).filter((t) => t !== 'CHANNEL_JOINED')).toEqual(['MESSAGE']);
      const event = events.find((e) => e.event_type === 'MESSAGE');
      expect(event!).toMatchObject({ id: sequence, event_type: 'MESSAGE', data: { content: 'eventually', message_id: body.message_id } });
      expect((await getContext(sessionId)).conversation_history).toEqual([{ role: 'user', content: 'eventually', channel: 'chat' }]);
    } finally {
      watcher.close();
    }
  });
});
