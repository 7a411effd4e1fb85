/**
 * The one place that lists every queue and job: name, payload schema, retry/backoff and retention.
 * Job names are a public contract (they are stored in Redis with each job): never rename one casually.
 * Enqueue only through `enqueue()`; workers parse each payload with the same schema on receipt.
 */
import { Queue, type JobsOptions } from 'bullmq';
import { z } from 'zod';
import { deliverJobSchema } from './sessions/schemas.js';
import { config } from './config.js';
import { bullConnection } from './redis.js';

export interface QueueDefinition {
  /** Jobs of this queue one worker process runs at once. */
  concurrency: number;
  /** Retry, backoff and retention of every job of the queue. */
  jobOptions: JobsOptions;
  /** Jobs of this queue running at once across all worker processes (BullMQ global concurrency). */
  globalConcurrency?: number;
}

export interface JobDefinition<S extends z.ZodType = z.ZodType> {
  queue: string;
  schema: S;
  /**
   * Partitioned jobs: each payload goes to one lane queue picked by hashing its key, so jobs with
   * one key run one at a time in enqueue order (lanes have concurrency 1) while lanes run in parallel.
   */
  partition?: { lanes: readonly string[]; key(payload: z.output<S>): string };
  /** Per-job overrides of the queue's options. */
  options?: JobsOptions;
  /** Deterministic job id for idempotent enqueueing (a repeat with the same id is ignored while the job is kept). */
  jobId?(payload: z.output<S>): string;
}

const keepFailedDays = 14;
/** Retention shared by every queue: completed jobs for a day, failed ones two weeks (visible in /admin/queues). */
const retention: JobsOptions = {
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: keepFailedDays * 24 * 3600 },
};
const retrying = (attempts: number, delay: number): JobsOptions => ({ attempts, backoff: { type: 'exponential', delay }, ...retention });

/** Names of the lane queues of a partitioned queue. */
const laneNames = <const P extends string>(prefix: P, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i}` as `${P}-${number}`);

/**
 * Session event lanes: every event of one session goes through one lane, one job at a time across
 * all worker processes, so the stream keeps the order in which the API accepted the events. Each
 * job is a few round trips, so lanes are many (parallel across sessions). Completed jobs are
 * dropped at once: every event has a fresh id and its handler is idempotent, and the hot path
 * saves the retention bookkeeping.
 */
export const sessionLanes = laneNames('sessions-lane', 64);
const sessionLane: QueueDefinition = {
  concurrency: 1,
  globalConcurrency: 1,
  jobOptions: { attempts: 8, backoff: { type: 'exponential', delay: 50 }, removeOnComplete: true, removeOnFail: retention.removeOnFail },
};

/** A stable lane index of a key (FNV-1a), so one key always maps to the same lane. */
export function laneOf(key: string, lanes: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % lanes;
}

/** Every queue of the platform. */
export const queueDefinitions = {
  // Session memory: persisting and broadcasting session events; expiry of idle sessions.
  sessions: { concurrency: 32, jobOptions: retrying(8, 100) },
  // Messaging-app channel: inbound processing, agent runs and outbound sends to the provider.
  chatapp: { concurrency: 8, jobOptions: retrying(6, 1000) },
  // CRM: lead webhook batches.
  crm: { concurrency: 4, jobOptions: retrying(5, 500) },
  // SRE automation: alert ingestion, incidents, tickets, runbooks, escalations.
  sre: { concurrency: 8, jobOptions: retrying(8, 1000) },
  // SRE discovery and monitor deployment (long runs kept apart from alert ingestion).
  discovery: { concurrency: 2, jobOptions: retrying(3, 5000) },
} satisfies Record<string, QueueDefinition>;

/** Partitioned queues' lanes (see sessionLanes). */
const laneQueueDefinitions: Record<string, QueueDefinition> = Object.fromEntries(sessionLanes.map((name) => [name, sessionLane]));

export type QueueName = keyof typeof queueDefinitions | (typeof sessionLanes)[number];

const define = <S extends z.ZodType>(def: JobDefinition<S> & { queue: QueueName }) => def;

/** Every job of the platform, by name ("<domain>.<action>"). */
export const jobDefinitions = {
  // --- sessions -------------------------------------------------------------
  // Persist one accepted event of a session's stream, then broadcast it (lane = hash of the session).
  'sessions.deliver': define({
    queue: 'sessions-lane-0',
    schema: deliverJobSchema,
    partition: { lanes: sessionLanes, key: (p) => p.session_id },
    jobId: (p) => (p.kind === 'message' ? p.message_id : p.event_id),
  }),
  // Close every live session past its resume window (one run per scheduler slot).
  'sessions.expire': define({ queue: 'sessions', schema: z.object({ slot: z.string() }) }),

  // --- chatapp --------------------------------------------------------------

  // --- crm ------------------------------------------------------------------

  // --- sre ------------------------------------------------------------------

  // --- discovery ------------------------------------------------------------
} satisfies Record<string, ReturnType<typeof define>>;

export type JobName = keyof typeof jobDefinitions;
export type JobPayload<N extends JobName> = z.input<(typeof jobDefinitions)[N]['schema']>;

/** Queue-agnostic view of a registry, so the worker runner and tests can use their own. */
export interface Registry {
  queues: Record<string, QueueDefinition>;
  jobs: Record<string, JobDefinition>;
}
export const registry: Registry = { queues: { ...queueDefinitions, ...laneQueueDefinitions }, jobs: jobDefinitions };

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

/** The queue a payload of a job goes to: its lane for a partitioned job, else the job's queue. */
export function queueOf(def: JobDefinition, payload: unknown): string {
  if (!def.partition) return def.queue;
  const { lanes, key } = def.partition;
  return lanes[laneOf(key(payload), lanes.length)]!;
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
  return queue(queueOf(def, data), reg).add(name, data, jobOptions(def, data, extra));
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
