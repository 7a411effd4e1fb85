import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { Queue, QueueEvents, type Job } from 'bullmq';
import { z } from '../../shared/zod.js';
import { enqueueIn, jobDefinitions, jobOptions, registry, queue, type Registry } from '../../shared/queues.js';
import { blockingConnection, bullConnection } from '../../shared/redis.js';
import { config } from '../../shared/config.js';
import { assertEveryJobHandled, handlerGaps, startWorkers, type Handlers } from '../../workers/runner.js';
import { handlers } from '../../workers/registry.js';
import { slotStart } from '../../workers/scheduler.js';
import { metricsRegistry } from '../../shared/metrics.js';

// A registry of its own, so these tests exercise the machinery without touching the platform's jobs.
const testRegistry: Registry = {
  queues: { probe: { concurrency: 2, jobOptions: { attempts: 3, backoff: { type: 'fixed', delay: 10 }, removeOnFail: false } } },
  jobs: {
    'probe.add': { queue: 'probe', schema: z.object({ a: z.number(), b: z.number() }) },
    'probe.flaky': { queue: 'probe', schema: z.object({ failTimes: z.number() }) },
    'probe.slow': { queue: 'probe', schema: z.object({ ms: z.number() }), jobId: (p) => `slow-${(p as { ms: number }).ms}` },
  },
};

const testHandlers: Handlers = {
  'probe.add': async (p: { a: number; b: number }) => p.a + p.b,
  'probe.flaky': async (p: { failTimes: number }, job: Job) => {
    if (job.attemptsMade < p.failTimes) throw new Error(`transient ${job.attemptsMade}`);
    return 'ok';
  },
  'probe.slow': async (p: { ms: number }) => {
    await new Promise((r) => setTimeout(r, p.ms));
    return 'done';
  },
};

const workers = startWorkers(testRegistry, testHandlers);
const events = new QueueEvents('probe', { connection: blockingConnection(), prefix: config().queues.prefix });
await events.waitUntilReady();
afterAll(async () => {
  await Promise.all(workers.map((w) => w.close()));
  await events.close();
});

const finished = (job: Job) => job.waitUntilFinished(events, 10_000);

describe('queue registry and workers', () => {
  it('every job of the platform registry has exactly one handler', () => {
    expect(handlerGaps(registry, handlers)).toEqual({ missing: [], unknown: [] });
  });

  it('start-up fails naming a job that has no handler', () => {
    expect(() => assertEveryJobHandled(testRegistry, { 'probe.add': testHandlers['probe.add']! })).toThrow(/job "probe.flaky" has no handler.*job "probe.slow" has no handler/);
    expect(() => startWorkers(testRegistry, { ...testHandlers, 'probe.ghost': async () => 1 })).toThrow(/handler "probe.ghost" matches no job/);
  });

  it('enqueueing validates the payload against the job schema', async () => {
    await expect(enqueueIn(testRegistry, 'probe.add', { a: 1 })).rejects.toThrow(/b/);
    const job = await enqueueIn(testRegistry, 'probe.add', { a: 2, b: 3 });
    expect(await finished(job)).toBe(5);
  });

  it('job durations are recorded per queue, job and outcome for the worker /metrics', async () => {
    const job = await enqueueIn(testRegistry, 'probe.add', { a: 1, b: 1 });
    await finished(job);
    const text = await metricsRegistry.metrics();
    expect(text).toMatch(/queue_job_duration_seconds_count\{queue="probe",job_name="probe.add",outcome="completed"\} [1-9]/);
  });

  it('a bad payload fails at once, without retries, and stays visible as failed', async () => {
    // Bypass enqueue()'s validation, as a stale or foreign producer would.
    const raw = new Queue('probe', { connection: bullConnection(), prefix: config().queues.prefix });
    const job = await raw.add('probe.add', { a: 'x' }, { attempts: 3 });
    await expect(finished(job)).rejects.toThrow(/invalid payload for "probe.add": a:/);
    const stored = await queue('probe', testRegistry).getJob(job.id!);
    expect(await stored!.getState()).toBe('failed');
    expect(stored!.attemptsMade).toBe(1);
    await raw.close();
  });

  it('transient errors are retried by the queue policy; exhausted jobs stay failed', async () => {
    const recovers = await enqueueIn(testRegistry, 'probe.flaky', { failTimes: 2 });
    expect(await finished(recovers)).toBe('ok');
    const exhausted = await enqueueIn(testRegistry, 'probe.flaky', { failTimes: 5 });
    await expect(finished(exhausted)).rejects.toThrow(/transient 2/);
    const failed = await queue('probe', testRegistry).getFailed();
    expect(failed.map((j) => j.id)).toContain(exhausted.id);
  });

  it('a job id from the registry makes a repeated enqueue a no-op', async () => {
    const first = await enqueueIn(testRegistry, 'probe.slow', { ms: 1 });
    const again = await enqueueIn(testRegistry, 'probe.slow', { ms: 1 });
    expect(again.id).toBe(first.id);
    expect(await queue('probe', testRegistry).getJobCountByTypes('completed', 'waiting', 'active', 'delayed')).toBeLessThanOrEqual(10);
  });

  it('closing a worker lets the job it is running finish', async () => {
    // A queue of its own, served only by the worker under test.
    const drainRegistry: Registry = {
      queues: { drain: { concurrency: 1, jobOptions: {} } },
      jobs: { 'drain.slow': { queue: 'drain', schema: z.object({ ms: z.number() }) } },
    };
    const finishedRuns: number[] = [];
    const slow = async (p: { ms: number }) => {
      await new Promise((r) => setTimeout(r, p.ms));
      finishedRuns.push(p.ms);
    };
    const [worker] = startWorkers(drainRegistry, { 'drain.slow': slow });
    const job = await enqueueIn(drainRegistry, 'drain.slow', { ms: 400 });
    await eventually(async () => (await job.getState()) === 'active', 10_000, 'the slow job to be active');
    await worker!.close();
    expect(finishedRuns).toEqual([400]);
    expect(await (await queue('drain', drainRegistry).getJob(job.id!))!.getState()).toBe('completed');
  });
});

describe('scheduler', () => {
  it('every process ticking within one slot derives the same job id', () => {
    const idAt = (at: string) =>
      jobOptions(jobDefinitions['discovery.run'], { trigger: 'schedule', slot: slotStart(new Date(at), 300).toISOString() }).jobId;
    const a = idAt('2026-11-21T10:00:01Z');
    const b = idAt('2026-11-21T10:04:59Z');
    const c = idAt('2026-11-21T10:05:00Z');
    expect(a).toBe(b);
    expect(c).not.toBe(a);
    expect(a).not.toContain(':');
  });

  it('the registry computes the job id of every tick and of a tick-enqueued ticket', () => {
    const slot = '2026-11-21T10:00:00.000Z';
    for (const name of ['sessions.expire', 'sre.incidents-tick', 'sre.alerts-tick', 'sre.runbooks-tick'] as const) {
      expect(jobOptions(jobDefinitions[name], { slot }).jobId).toBe(`${name}-${Date.parse(slot) / 1000}`);
    }
    const incident_id = '0b6a1f7e-3c1d-4c55-9b8e-2f0d6f1e9a10';
    // One ticket job per incident, whoever enqueues it: a tick adds nothing while the first still retries.
    expect(jobOptions(jobDefinitions['sre.incident-ticket'], { incident_id, slot }).jobId).toBe(`incident-ticket-${incident_id}`);
    expect(jobOptions(jobDefinitions['sre.incident-ticket'], { incident_id }).jobId).toBe(`incident-ticket-${incident_id}`);
  });
});
