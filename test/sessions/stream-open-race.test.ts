import { beforeAll, describe, expect, it } from 'vitest';
import { createRedis } from '../../shared/redis.js';
import { sessionChannel } from '../../shared/bus.js';
import { startPlatform, testApiKey, type Platform } from '../helpers/platform.js';
import { newSession } from './helpers.js';
import { subscribe } from '../helpers/sse.js';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
});

describe('opening an SSE stream while its session is busy', () => {
  it('opens with 200 even when an event arrives together with the subscription', async () => {
    // Another process floods each session's bus channel; the stream subscribes to a channel this
    // process does not listen to yet, so Redis can hand over the subscription and an event at once.
    const flooder = createRedis('test-flooder');
    const results: string[] = [];
    try {
      for (let round = 0; round < 15; round++) {
        const { sessionId } = await newSession(api);
        let sequence = 0;
        let flooding = true;
        const flood = (async () => {
          while (flooding) {
            const pipeline = flooder.pipeline();
            for (let i = 0; i < 50; i++) {
              sequence += 1;
              pipeline.publish(
                sessionChannel(sessionId),
                JSON.stringify({ id: `e${sequence}`, sequence, event_type: 'TYPING', session_id: sessionId, channel: 'chat', data: { is_typing: true } }),
              );
            }
            await pipeline.exec();
          }
        })();
        const stream = subscribe(api.url, sessionId, 'voice', { apiKey: testApiKey });
        try {
          const outcome = await stream.opened.then(() => 'open', (err: Error) => err.message);
          results.push(outcome);
          if (outcome === 'open') {
            await stream.waitFor(1);
            const ids = stream.events.map((e) => e.id);
            expect(ids).toEqual([...ids].sort((a, b) => a - b));
          }
        } finally {
          flooding = false;
          await flood;
          stream.close();
        }
      }
    } finally {
      flooder.disconnect();
    }
    expect(results).toEqual(Array(15).fill('open'));
  });
});
