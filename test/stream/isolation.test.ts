/**
 * One session's trouble is its own (shared/stream/index.ts, Isolation): a session whose row is
 * locked, or whose payload Postgres refuses, delays no other session, even one of its own lane.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { db } from '../../shared/db/index.js';
import { enqueue, queue } from '../../shared/queues.js';
import { metricsRegistry } from '../../shared/metrics.js';
import { startPlatform, testApiKey, type Platform } from '../helpers/platform.js';
import { subscribe, type Subscriber } from '../helpers/sse.js';
import { eventually } from '../helpers/eventually.js';
import { json, newInteraction, newSession, publish } from '../sessions/helpers.js';

let api: Platform;
const open: Subscriber[] = [];
beforeAll(async () => {
  // One lane: every session of this file shares it, the hardest case for isolation.
  process.env.STREAM_LANES = '1';
  // POSTs answer 202 soon instead of waiting 2 s for a publication that a lock holds back.
  process.env.SESSION_PUBLISH_WAIT_MS = '200';
  api = await startPlatform();
});
afterAll(() => {
  for (const s of open) s.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A session with a chat interaction and an SSE subscriber on voice (which receives chat's messages). */
async function streamedSession() {
  const { sessionId } = await newSession(api);
  const chat = await newInteraction(api, sessionId, 'chat');
  const voice = subscribe(api.url, sessionId, 'voice', { apiKey: testApiKey });
  open.push(voice);
  await voice.opened;
  return { sessionId, chat, voice };
}

const say = (s: { sessionId: string; chat: string }, content: string) => publish(api, s.sessionId, { channel: 'chat', role: 'user', content, interaction_id: s.chat });
const messagesOf = (sub: Subscriber) => sub.events.filter((e) => e.event_type === 'MESSAGE').map((e) => e.data.content as string);

async function counter(name: string): Promise<number> {
  const metric = (await metricsRegistry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values as Array<{ value: number }> | undefined)?.reduce((n, v) => n + v.value, 0) ?? 0;
}

describe('isolation of sessions in the stream', () => {
  it('a session whose row is locked for 20 s delays no other session of its lane (p99 < 2 s); its own messages follow in order once the lock goes', async () => {
    const stuck = await streamedSession();
    const others = await Promise.all(Array.from({ length: 5 }, streamedSession));
    const parkedBefore = await counter('switchboard_stream_sessions_parked_total');

    // A long transaction holds the stuck session's row, as a slow erasure or a stuck connection would.
    const trx = await db().transaction();
    await trx('sessions').where({ session_id: stuck.sessionId }).forUpdate().first();
    const lockedAt = Date.now();
    const stuckSent: string[] = [];
    const latencies: number[] = [];
    try {
      for (let round = 0; Date.now() - lockedAt < 20_000; round++) {
        if (round % 8 === 0) {
          const content = `stuck-${round}`;
          stuckSent.push(content);
          expect((await say(stuck, content)).status).toBe(202);
        }
        await Promise.all(
          others.map(async (o) => {
            const content = `other-${round}`;
            const started = Date.now();
            const arrived = o.voice.next((e) => e.data.content === content, 15_000);
            expect([200, 202]).toContain((await say(o, content)).status);
            await arrived;
            latencies.push(Date.now() - started);
          }),
        );
        await sleep(200);
      }
      // Nothing of the stuck session got through while its row was held.
      expect(messagesOf(stuck.voice)).toEqual([]);
    } finally {
      await trx.rollback();
    }

    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.ceil(latencies.length * 0.99) - 1]!;
    expect(latencies.length).toBeGreaterThan(100);
    expect(p99, `p99 of ${latencies.length} deliveries to other sessions while one was locked`).toBeLessThan(2_000);

    // Once the lock goes, the stuck session's messages arrive, all of them, in the order they were sent.
    await stuck.voice.waitFor(stuckSent.length, 10_000);
    expect(messagesOf(stuck.voice)).toEqual(stuckSent);
    const history = await db()('session_messages').where({ session_id: stuck.sessionId }).orderBy('sequence').pluck('content');
    expect(history).toEqual(stuckSent);
    expect(await counter('switchboard_stream_sessions_parked_total')).toBeGreaterThan(parkedBefore);
    // The drain waited out the lock without using an attempt, stepping aside (back to the queue) at least once in 20 s.
    const drains = (await queue('stream-parked').getCompleted()).filter((j) => j.data.session_id === stuck.sessionId);
    expect(drains.length).toBeGreaterThan(0);
    // attemptsMade counts the completion itself: 1 means no attempt failed.
    expect(drains.map((j) => j.attemptsMade)).toEqual(drains.map(() => 1));
    expect(Math.max(...drains.map((j) => j.attemptsStarted))).toBeGreaterThan(1);
  }, 90_000);

  it('a payload Postgres can never store is set aside after its retries, as a failed job with its reason and the event, holding no one else', async () => {
    const broken = await streamedSession();
    const other = await streamedSession();
    const setAsideBefore = await counter('switchboard_stream_events_set_aside_total');

    // Past the API's checks (as an older API, or a check that misses a case, would let it through): a NUL Postgres text refuses.
    const badId = randomUUID();
    await enqueue('stream.deliver', {
      events: [{ kind: 'message', session_id: broken.sessionId, message_id: badId, channel: 'chat', role: 'user', content: 'nul \u0000 inside', interaction_id: broken.chat, metadata: {}, idempotency_key: null }],
    });
    const after = await say(broken, 'after the bad one');
    expect([200, 202]).toContain(after.status);

    // Another session of the same lane is not held up.
    const started = Date.now();
    const arrived = other.voice.next((e) => e.data.content === 'unaffected', 5_000);
    await json(await say(other, 'unaffected'), 200);
    await arrived;
    expect(Date.now() - started).toBeLessThan(2_000);

    // The broken session goes on once the bad event is set aside: its later message arrives, alone.
    await broken.voice.next((e) => e.data.content === 'after the bad one', 20_000);
    expect(messagesOf(broken.voice)).toEqual(['after the bad one']);

    const failed = await eventually(async () => (await queue('stream-parked').getFailed()).find((j) => j.data.set_aside?.message_id === badId), 10_000);
    expect(failed.name).toBe('stream.drain-parked');
    expect(failed.failedReason).toMatch(/unicode|0x00|null/i);
    expect(failed.attemptsMade).toBe(failed.opts.attempts);
    expect(failed.data.set_aside).toMatchObject({ session_id: broken.sessionId, content: 'nul \u0000 inside' });
    expect(await counter('switchboard_stream_events_set_aside_total')).toBe(setAsideBefore + 1);
    expect(await db()('session_messages').where({ session_id: broken.sessionId }).pluck('content')).toEqual(['after the bad one']);
  }, 60_000);
});
