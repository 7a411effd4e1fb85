/**
 * Requests reaching a lane together, or while its previous group is on its way, go as one job
 * (shared/stream/enqueue.ts), each request's events whole and in hand-over order; limits are taken per group; a request the job schema refuses is refused
 * alone; and the worker writes a group of several sessions so that one session's failure is its own.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { enqueueOnLane } from '../../shared/stream/enqueue.js';
import { deliverLaneJob, deliverLaneRun } from '../../shared/stream/persist.js';
import type { StreamEvent } from '../../shared/stream/stream.schemas.js';
import { queue } from '../../shared/queues.js';
import { db } from '../../shared/db/index.js';
import { parkedHead } from '../../shared/stream/parked.js';
import { randomPhone } from '../sessions/helpers.js';
import { TooManyRequestsError } from '../../shared/errors.js';

beforeAll(() => {
  // One lane: every session of this file shares it. No worker runs, so the jobs stay waiting to be read.
  process.env.STREAM_LANES = '1';
  process.env.LIMIT_PUBLISHES_PER_KEY_PER_MINUTE = '3';
});

const message = (sessionId: string, content: string, extra: Partial<StreamEvent> = {}): StreamEvent =>
  ({ kind: 'message', session_id: sessionId, message_id: randomUUID(), channel: 'chat', role: 'user', content, interaction_id: null, metadata: {}, idempotency_key: null, ...extra }) as StreamEvent;

/** The lane's waiting jobs, oldest first, as the contents of their events. */
async function waitingJobs(): Promise<string[][]> {
  const jobs = await queue('stream-lane-0').getJobs(['wait'], 0, -1, true);
  return jobs.map((j) => (j.data.events as StreamEvent[]).map((e) => (e.kind === 'message' ? e.content : e.kind === 'event' ? e.event_type : e.kind)));
}

async function newLiveSession(): Promise<string> {
  const userId = randomUUID();
  const sessionId = randomUUID();
  await db()('users').insert({ user_id: userId, phone_number: randomPhone() });
  await db()('sessions').insert({ session_id: sessionId, user_id: userId, status: 'active' });
  return sessionId;
}

describe('grouping on a lane', () => {
  it('requests handed over together go as one job, in order', async () => {
    await queue('stream-lane-0').obliterate({ force: true });
    const sessions = [randomUUID(), randomUUID(), randomUUID()];
    await Promise.all(Array.from({ length: 30 }, (_, i) => enqueueOnLane([message(sessions[i % 3]!, `m${i}`)])));
    expect(await waitingJobs()).toEqual([Array.from({ length: 30 }, (_, i) => `m${i}`)]);
  });

  it('while a group is on its way, the next requests wait and leave together once its callers stop waiting', async () => {
    await queue('stream-lane-0').obliterate({ force: true });
    const sessionId = randomUUID();
    const settle = await enqueueOnLane([message(sessionId, 'first')], { awaited: true });
    const next = Array.from({ length: 5 }, (_, i) => enqueueOnLane([message(sessionId, `n${i}`)]));
    let added = 0;
    for (const n of next) void n.then(() => added++);
    // Held: nothing of the next group is added while the first is on its way (fewer than 16 events wait).
    await new Promise((r) => setTimeout(r, 100));
    expect({ added, jobs: await waitingJobs() }).toEqual({ added: 0, jobs: [['first']] });
    settle();
    await Promise.all(next);
    expect(await waitingJobs()).toEqual([['first'], ['n0', 'n1', 'n2', 'n3', 'n4']]);
  });

  it('a group whose callers never settle holds the next one for 250 ms at most', async () => {
    await queue('stream-lane-0').obliterate({ force: true });
    const sessionId = randomUUID();
    await enqueueOnLane([message(sessionId, 'stuck')], { awaited: true });
    const started = Date.now();
    await enqueueOnLane([message(sessionId, 'after')]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await waitingJobs()).toEqual([['stuck'], ['after']]);
  });

  it('limits are taken for a group at once: the requests over a limit are refused (429), the others go', async () => {
    await queue('stream-lane-0').obliterate({ force: true });
    const sessionId = randomUUID();
    const key = `key-${randomUUID()}`;
    {
      const outcomes = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => enqueueOnLane([message(sessionId, `m${i}`)], { limits: [{ name: 'keyPublishes', key }] })));
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'rejected']);
      const refusal = (outcomes[3] as PromiseRejectedResult).reason as TooManyRequestsError;
      expect(refusal).toBeInstanceOf(TooManyRequestsError);
      expect(refusal.message).toMatch(/at most 3/);
      expect(refusal.retryAfterSeconds).toBeGreaterThan(0);
      expect(await waitingJobs()).toEqual([['m0', 'm1', 'm2']]);
    }
  });

  it('a request the job schema refuses is refused alone; the rest of its group is enqueued', async () => {
    await queue('stream-lane-0').obliterate({ force: true });
    const sessionId = randomUUID();
    const first = enqueueOnLane([message(sessionId, 'first')]);
    const bad = enqueueOnLane([message(sessionId, 'bad', { role: 'wizard' } as never)]);
    const good = enqueueOnLane([message(sessionId, 'good')]);
    await expect(bad).rejects.toThrow(/role/);
    await Promise.all([first, good]);
    expect(await waitingJobs()).toEqual([['first'], ['good']]);
  });

  it('a group over the size of one job is cut into several, each request whole', async () => {
    await queue('stream-lane-0').obliterate({ force: true });
    const sessionId = randomUUID();
    const big = 'x'.repeat(30_000);
    // 36 requests of 30,000 characters after the first, handed over together: the first and 34 fit under 1 MiB of text, the other 2 make the next job.
    await Promise.all(Array.from({ length: 37 }, (_, i) => enqueueOnLane([message(sessionId, i === 0 ? 'first' : big)])));
    expect((await waitingJobs()).map((j) => j.length)).toEqual([35, 2]);
  });

  it('a job of several sessions writes the sessions it can and parks only the one Postgres refuses', async () => {
    const [good, broken, other] = [await newLiveSession(), await newLiveSession(), await newLiveSession()];
    const events = [message(good, 'g1'), message(broken, 'nul \u0000 inside'), message(other, 'o1'), message(broken, 'b2'), message(good, 'g2')];
    expect(await deliverLaneJob(events)).toEqual({ published: 3, parked: 2 });
    const stored = await db()('session_messages').whereIn('session_id', [good, broken, other]).orderBy(['session_id', 'sequence']).select('session_id', 'content', 'sequence');
    expect(stored.filter((m) => m.session_id === good).map((m) => [m.content, Number(m.sequence)])).toEqual([['g1', 1], ['g2', 2]]);
    expect(stored.filter((m) => m.session_id === other).map((m) => m.content)).toEqual(['o1']);
    expect(stored.filter((m) => m.session_id === broken)).toEqual([]);
    expect(JSON.parse((await parkedHead(broken))!).content).toBe('nul \u0000 inside');
  });

  it('a lane job takes along the jobs waiting behind it: one write for all, those jobs removed, each session in order', async () => {
    const lane = queue('stream-lane-0');
    await lane.obliterate({ force: true });
    const [a, b] = [await newLiveSession(), await newLiveSession()];
    // Three jobs on the lane (no worker runs here): the first alone, then a group, then another.
    await enqueueOnLane([message(a, 'a1')]);
    await Promise.all([enqueueOnLane([message(b, 'b1')]), enqueueOnLane([message(a, 'a2')]), enqueueOnLane([message(b, 'b2')])]);
    await enqueueOnLane([message(a, 'a3')]);
    const [first, ...behind] = await lane.getJobs(['wait'], 0, -1, true);
    expect(behind.length).toBeGreaterThan(0);
    expect(await deliverLaneRun(first!.data.events, first!)).toEqual({ published: 5, parked: 0, jobs: 1 + behind.length });
    const stored = await db()('session_messages').whereIn('session_id', [a, b]).orderBy(['session_id', 'sequence']).select('session_id', 'content');
    expect(stored.filter((m) => m.session_id === a).map((m) => m.content)).toEqual(['a1', 'a2', 'a3']);
    expect(stored.filter((m) => m.session_id === b).map((m) => m.content)).toEqual(['b1', 'b2']);
    // The jobs taken along are gone; the first is left to BullMQ, whose job it is.
    expect((await lane.getJobs(['wait'], 0, -1, true)).map((j) => j.id)).toEqual([first!.id]);
  });
});
