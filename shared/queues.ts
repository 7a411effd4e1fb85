/**
 * The one place that lists every queue and job: name, payload schema, retry/backoff and retention.
 * Job names are a public contract (they are stored in Redis with each job): never rename one casually.
 * Enqueue only through `enqueue()`; workers parse each payload with the same schema on receipt.
 */
import { Queue, type JobsOptions } from 'bullmq';
import type { z } from 'zod';
import { config } from './config.js';
import { bullConnection } from './redis.js';
import { createHash } from 'node:crypto';
import { leadBatchJob } from './crm/schemas.js';

export interface QueueDefinition {
  /** Jobs of this queue one worker process runs at once. */
  concurrency: number;
  /** Retry, backoff and retention of every job of the queue. */
  jobOptions: JobsOptions;
}

export interface JobDefinition<S extends z.ZodType = z.ZodType> {
  queue: string;
  schema: S;
  /** Per-job overrides of the queue's options. */
  options?: JobsOptions;
  /** Deterministic job id for idempotent enqueueing (a repeat with the same id is ignored while the job is kept). */
  // Method syntax (bivariant) so a typed jobId fits the registry's Record<string, JobDefinition>.
  jobId?(payload: z.output<S>): string;
}

const keepFailedDays = 14;
/** Retention shared by every queue: completed jobs for a day, failed ones two weeks (visible in /admin/queues). */
const retention: JobsOptions = {
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: keepFailedDays * 24 * 3600 },
};
const retrying = (attempts: number, delay: number): JobsOptions => ({ attempts, backoff: { type: 'exponential', delay }, ...retention });

/** Every queue of the platform. */
export const queueDefinitions = {
  // Session memory: persisting and broadcasting session events; expiry of idle sessions.
  sessions: { concurrency: 32, jobOptions: retrying(8, 100) },
  // Messaging-app channel: inbound processing, agent runs and outbound sends to the provider.
  chatapp: { concurrency: 8, jobOptions: retrying(6, 1000) },
  // CRM: lead webhook batches.
  crm: { concurrency: 8, jobOptions: retrying(5, 500) },
  // SRE automation: alert ingestion, incidents, tickets, runbooks, escalations.
  sre: { concurrency: 8, jobOptions: retrying(8, 1000) },
  // SRE discovery and monitor deployment (long runs kept apart from alert ingestion).
  discovery: { concurrency: 2, jobOptions: retrying(3, 5000) },
} satisfies Record<string, QueueDefinition>;

export type QueueName = keyof typeof queueDefinitions;

const define = <S extends z.ZodType>(def: JobDefinition<S> & { queue: QueueName }) => def;

/** Every job of the platform, by name ("<domain>.<action>"). */
export const jobDefinitions = {
  // --- sessions -------------------------------------------------------------

  // --- chatapp --------------------------------------------------------------

  // --- crm ------------------------------------------------------------------
  // A lead webhook batch: validated per lead and written by one multi-row statement. One job per delivery id.
  'crm.ingest-lead-batch': define({
    queue: 'crm',
    schema: leadBatchJob,
    jobId: (p) => `lead-batch-${createHash('sha256').update(p.delivery_id).digest('hex').slice(0, 32)}`,
    // A job holds a whole batch (~300 kB for 1,000 leads) and its ids: keep few completed ones. Repeated
    // deliveries are answered from crm_webhook_deliveries, not from completed jobs.
    options: { removeOnComplete: { age: 3600, count: 100 } },
  }),

  // --- sre ------------------------------------------------------------------

  // --- discovery ------------------------------------------------------------
} satisfies Record<string, ReturnType<typeof define>>;
void define;

export type JobName = keyof typeof jobDefinitions;
export type JobPayload<N extends JobName> = z.input<(typeof jobDefinitions)[N]['schema']>;

/** Queue-agnostic view of a registry, so the worker runner and tests can use their own. */
export interface Registry {
  queues: Record<string, QueueDefinition>;
  jobs: Record<string, JobDefinition>;
}
export const registry: Registry = { queues: queueDefinitions, jobs: jobDefinitions };

const open = new Map<string, Queue>();

/** The (cached) BullMQ Queue of a queue name. */
export function queue(name: string, reg: Registry = registry): Queue {
  let q = open.get(name);
  if (!q) {
    const def = reg.queues[name];
    if (!def) throw new Error(`unknown queue "${name}"`);
    q = new Queue(name, { connection: bullConnection(), prefix: config().queues.prefix, defaultJobOptions: def.jobOptions });
    open.set(name, q);
  }
  return q;
}

/** The job options of one job: its queue's, its own, its idempotency id and the caller's. */
export function jobOptions(def: JobDefinition, payload: unknown, extra: JobsOptions = {}): JobsOptions {
  return { ...def.options, ...(def.jobId ? { jobId: def.jobId(payload) } : {}), ...extra };
}

/** Validates a payload against its job's schema and adds the job to its queue. */
export async function enqueue<N extends JobName>(name: N, payload: JobPayload<N>, extra?: JobsOptions) {
  return enqueueIn(registry, name, payload, extra);
}

/** enqueue() against any registry (tests define their own jobs). */
export async function enqueueIn(reg: Registry, name: string, payload: unknown, extra?: JobsOptions) {
  const def = reg.jobs[name];
  if (!def) throw new Error(`unknown job "${name}"`);
  const data = def.schema.parse(payload);
  return queue(def.queue, reg).add(name, data, jobOptions(def, data, extra));
}

/** Every queue of a registry, opened (dashboard, metrics). */
export function allQueues(reg: Registry = registry): Queue[] {
  return Object.keys(reg.queues).map((name) => queue(name, reg));
}

/** Closes every opened Queue connection. */
export async function closeQueues(): Promise<void> {
  const qs = [...open.values()];
  open.clear();
  await Promise.all(qs.map((q) => q.close()));
}
