/**
 * Runs the queues of a registry: one BullMQ Worker per queue, dispatching each job by name to its
 * handler after parsing the payload with the job's schema. A payload that does not parse fails at
 * once without retries (UnrecoverableError); any other error is retried by the queue's policy.
 */
import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { z } from 'zod';
import { config, ConfigError } from '../shared/config.js';
import { blockingConnection, closeOrDrop } from '../shared/redis.js';
import { dependencyFailed, reportRedisError, unavailableDependency } from '../shared/outages.js';
import { jobDuration } from '../shared/metrics.js';
import { logger } from '../shared/logger.js';
import { jobRequestIdKey, withRequestId } from '../shared/request-context.js';
import { queueTelemetry } from '../shared/telemetry.js';
import { queue, type JobData, type JobName, type Registry } from '../shared/queues.js';

export type Handler<S extends z.ZodType = z.ZodType> = (payload: z.output<S>, job: Job) => Promise<unknown>;
/** The handler of one job of shared/queues.ts: its payload is what the job's schema parses. */
export type JobHandler<N extends JobName> = (payload: JobData<N>, job: Job) => Promise<unknown>;
export type Handlers = Record<string, Handler<any>>;

/** Names of jobs without a handler, and handlers without a job. */
export function handlerGaps(reg: Registry, handlers: Handlers): { missing: string[]; unknown: string[] } {
  return {
    missing: Object.keys(reg.jobs).filter((name) => !handlers[name]),
    unknown: Object.keys(handlers).filter((name) => !reg.jobs[name]),
  };
}

/** Throws naming every job that has no handler (and every handler of no job). */
export function assertEveryJobHandled(reg: Registry, handlers: Handlers): void {
  const { missing, unknown } = handlerGaps(reg, handlers);
  const problems = [
    ...missing.map((n) => `job "${n}" has no handler`),
    ...unknown.map((n) => `handler "${n}" matches no job in the registry`),
  ];
  if (problems.length) throw new Error(`Worker start-up refused: ${problems.join('; ')}`);
}

/**
 * Locks of every other queue: a job of a worker that died returns to its queue within 15-20 s
 * (BullMQ's defaults: 30-60 s), and is failed only after stalling 5 times (default once).
 */
const defaultLocks = { lockDuration: 15_000, stalledInterval: 5_000, maxStalledCount: 5 };

/**
 * The queues a worker process runs: every queue, or those WORKER_QUEUES names (a queue also brings
 * its lanes: stream → stream-lane-*). An unknown name stops start-up, naming it.
 */
export function workerQueues(all: string[], chosen: string[] | undefined): string[] {
  if (!chosen?.length) return all;
  const unknown = chosen.filter((name) => !all.some((q) => q === name || q.startsWith(`${name}-lane-`)));
  if (unknown.length) throw new ConfigError(`Invalid configuration:\n  WORKER_QUEUES: unknown queue(s) ${unknown.join(', ')}; known: ${all.filter((q) => !q.includes('-lane-')).join(', ')}`);
  return all.filter((q) => chosen.some((name) => q === name || q.startsWith(`${name}-lane-`)));
}

/** A job's payload apart from the id of the request that enqueued it (shared/queues.ts enqueue()). */
function requestOf(data: unknown): { payload: unknown; requestId?: string } {
  if (!data || typeof data !== 'object' || !(jobRequestIdKey in data)) return { payload: data };
  const { [jobRequestIdKey]: requestId, ...payload } = data as Record<string, unknown>;
  return { payload, requestId: typeof requestId === 'string' ? requestId : undefined };
}

/** The jobs each worker of this process is running. */
const runningJobs = new WeakMap<Worker, Set<Promise<unknown>>>();

/** How long workers may take to record their last jobs and close once those jobs ended. */
const closeGraceMs = 5_000;

/**
 * Closes workers: they take no new job, finish the ones they run, then record them and close their
 * connections; a worker that has not closed within the grace after its last job ended (Redis away)
 * has its connections dropped, so a shutdown during an outage still ends.
 */
export async function closeWorkers(workers: Worker[]): Promise<void> {
  const closing = workers.map((w) => w.close());
  for (const w of workers) {
    const jobs = runningJobs.get(w);
    while (jobs?.size) await Promise.allSettled([...jobs]);
  }
  await Promise.all(closing.map((closed, i) => closeOrDrop(() => closed, () => workers[i]!.disconnect(), closeGraceMs)));
}

/** Starts one Worker per queue of the registry (or of `only`). */
export function startWorkers(reg: Registry, handlers: Handlers, only?: string[]): Worker[] {
  assertEveryJobHandled(reg, handlers);
  const log = logger('worker');
  const names = only ?? Object.keys(reg.queues);
  return names.map((queueName) => {
    const def = reg.queues[queueName];
    if (!def) throw new Error(`unknown queue "${queueName}"`);
    const jobs = new Set<Promise<unknown>>();
    const worker = new Worker(
      queueName,
      async (job) => {
        const jobDef = reg.jobs[job.name];
        const handler = handlers[job.name];
        if (!jobDef || !handler || !(jobDef.queue === queueName || jobDef.partition?.lanes().includes(queueName))) {
          throw new UnrecoverableError(`no handler for job "${job.name}" on queue "${queueName}"`);
        }
        const { payload, requestId } = requestOf(job.data);
        const parsed = jobDef.schema.safeParse(payload);
        if (!parsed.success) {
          throw new UnrecoverableError(`invalid payload for "${job.name}": ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
        }
        const end = jobDuration.startTimer({ queue: queueName, job_name: job.name });
        const run = async () => {
          try {
            const result = await handler(parsed.data, job);
            const seconds = end({ outcome: 'completed' });
            log.debug({ queue: queueName, job: job.name, id: job.id, duration_ms: Math.round(seconds * 1e4) / 10 }, 'job done');
            return result;
          } catch (err) {
            end({ outcome: err instanceof DelayedError ? 'delayed' : 'failed' });
            throw err;
          }
        };
        // The handler's log lines (and jobs it enqueues) carry the request that enqueued this job.
        const running = requestId ? withRequestId(requestId, run) : run();
        jobs.add(running);
        return running.finally(() => jobs.delete(running));
      },
      {
        connection: blockingConnection(),
        prefix: config().queues.prefix,
        concurrency: def.concurrency,
        ...(def.locks ?? defaultLocks),
        ...queueTelemetry(),
      },
    );
    runningJobs.set(worker, jobs);
    if (def.globalConcurrency) {
      queue(queueName, reg)
        .setGlobalConcurrency(def.globalConcurrency)
        .catch((err) => log.error({ queue: queueName, err }, 'could not set global concurrency'));
    }
    worker.on('failed', (job, err) => {
      const exhausted = !job || job.attemptsMade >= (job.opts.attempts ?? 1) || err instanceof UnrecoverableError;
      // A dependency outage fails every job at once: one line per outage, not one per job.
      const dependency = unavailableDependency(err);
      if (dependency && !exhausted) return dependencyFailed(dependency, err);
      log[exhausted ? 'error' : 'warn']({ queue: queueName, job: job?.name, id: job?.id, request_id: job && requestOf(job.data).requestId, attempt: job?.attemptsMade, err: err.message }, exhausted ? 'job failed for good' : 'job failed; will retry');
    });
    worker.on('error', (err) => {
      if (unavailableDependency(err) || /ECONNREFUSED|ECONNRESET|Connection is closed/.test(err.message)) return reportRedisError(`worker ${queueName}`, err);
      // After an outage a job's lock may have expired (another worker runs it again; handlers are idempotent).
      if (/could not renew lock|Missing lock/.test(err.message)) return log.warn({ queue: queueName, err: err.message }, 'job lock lost');
      log.error({ queue: queueName, err }, 'worker error');
    });
    return worker;
  });
}
