/**
 * A user's erasure ends their sessions' streams through the stream's lanes: each session's final event
 * takes its place behind the events accepted before it, instead of overtaking them on the bus.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { startWorkers } from '../../workers/runner.js';
import { handlers } from '../../workers/registry.js';
import { queue, registry } from '../../shared/queues.js';
import { onShutdown } from '../../shared/lifecycle.js';
import type { StreamEvent } from '../../shared/stream/stream.schemas.js';
import { json, newInteraction, newSession, publish } from '../sessions/helpers.js';
import { openRawStream, parseFrames } from '../helpers/sse.js';

let api: Platform;
beforeAll(async () => {
  // Answers at once: the lanes have no worker until the test starts them.
  process.env.SESSION_PUBLISH_WAIT_MS = '0';
  api = await startPlatform({ workers: false });
});

/** The lane's waiting events of one session, oldest first, as kind:what. */
async function laneOf(sessionId: string): Promise<string[]> {
  const jobs = await queue('stream-lane-0').getJobs(['wait'], 0, -1, true);
  return jobs.flatMap((j) => (j.data.events as StreamEvent[]).filter((e) => e.session_id === sessionId))
    .map((e) => (e.kind === 'message' ? `message:${e.content}` : e.kind === 'event' ? `event:${e.event_type}` : `erased:${e.sequence}`));
}

describe('erasure through the stream', () => {
  it("the final event of an erased user's session waits in the session's lane behind what was accepted before it, and ends the streams in that order", async () => {
    const { userId, sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const voice = await openRawStream(api, sessionId, 'voice');
    expect((await publish(api, sessionId, { channel: 'chat', role: 'user', content: 'before the erasure', interaction_id: chat })).status).toBe(202);

    await json(await api.request(`/api/users/${userId}`, { method: 'DELETE' }), 200);
    // Nothing was written before the erasure took the session's row: its final event is sequence 1,
    // queued behind the join and the message (which the lane will find gone).
    expect(await laneOf(sessionId)).toEqual(['event:CHANNEL_JOINED', 'message:before the erasure', 'erased:1']);
    expect((await publish(api, sessionId, { channel: 'chat', role: 'user', content: 'after', interaction_id: chat })).status).toBe(404);

    const workers = startWorkers(registry, handlers);
    onShutdown('workers', () => Promise.all(workers.map((w) => w.close())));
    expect(await voice.ended).toBe(true);
    // The join and the message were refused (their session is gone); the stream got only its end.
    expect(parseFrames(voice.text())).toEqual([{ id: 1, data: { event_type: 'CONTEXT_UPDATE', session_id: sessionId, channel: 'chat', data: { session_status: 'closed', reason: 'user_erased' } } }]);
  });
});
