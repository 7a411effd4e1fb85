/**
 * The one place that lists every queue and job: name, payload schema, retry/backoff and retention.
 * Job names are a public contract (they are stored in Redis with each job): never rename one casually.
 * Enqueue only through `enqueue()`; workers parse each payload with the same schema on receipt.
 */
import { Queue, QueueEvents, type JobsOptions } from 'bullmq';
import { z } from 'zod';
import { deliverBatchSchema, deliverJobSchema } from './sessions/schemas.js';
import { config } from './config.js';
import { normalizedAlerts } from './sre/alerts/payloads.js';
import { blockingConnection, bullConnection } from './redis.js';
import { reportRedisError } from './outages.js';
import { createHash } from 'node:crypto';
import { leadBatchJob } from './crm/schemas.js';

export interface QueueDefinition {
  /** Jobs of this queue one worker process runs at once. */
  concurrency: number;
  /** Retry, backoff and retention of every job of the queue. */
  jobOptions: JobsOptions;
  /** Jobs of this queue running at once across all worker processes (BullMQ global concurrency). */
  globalConcurrency?: number;
  /** BullMQ worker lock and stall-check settings (defaults: 30 s lock, 30 s check, 1 stall allowed). */
  locks?: { lockDuration: number; stalledInterval: number; maxStalledCount: number };
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
  /**
   * Deterministic job id for idempotent enqueueing (a repeat with the same id is ignored while the job
   * is kept); undefined lets BullMQ number the job. Method syntax: checked bivariantly, so typed
   * definitions fit the registry.
   */
  jobId?(payload: z.output<S>): string | undefined;
  /** Queues the job was declared on before: jobs still waiting there when a release moves it are run, not refused. */
  formerQueues?: readonly string[];
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
 * all worker processes, so the stream keeps the order in which the API accepted the events. The API
 * holds a lane's next group until the one on its way is published (under load, until one of two
 * is: shared/sessions/lanes.ts), so a group holds what the lane received during a round trip: the
 * fewer the lanes, the larger the groups, and the fewer the jobs, statements and socket writes per
 * message. A job costs the worker three Redis round trips (the marker's BZPOPMIN, moveToActive,
 * moveToFinished) and Redis three scripts, whatever it carries; with 16 lanes at 750 msg/s a job
 * carried about one event.
 * One lane takes new events. Same-sitting bench:sessions (no restart, 12 s steps, one run each, load
 * 1.9-2.7), lanes 16 / 4 / 2 / 1: at 750 msg/s CPU 1.92 / 1.79 / 1.60 / 1.51 ms per message, p50
 * 5.9 / 4.6 / 2.9 / 2.9 ms, p99 27.9 / 16.5 / 10.0 / 8.4 ms; at 2,000 msg/s p99 95.5 / 75.4 / 409
 * (failed) / 38.0 ms, CPU 0.78 / 0.72 / 0.66 / 0.61. A second sitting, 16 / 1 at 750 msg/s: CPU 1.84
 * / 1.50. What one lane gives up: jobs of several worker processes no longer run side by side (each
 * job carries the whole round trip's events instead, written by one statement), and a group that
 * fails holds every session's events, not a sixteenth of them, while it is retried. Completed jobs
 * are dropped at once: every event has a fresh id and its handler is idempotent, and the hot path
 * saves the retention bookkeeping.
 */
export const sessionLanes = laneNames('sessions-lane', 1);
/**
 * Every lane queue a release has sent jobs to (releases before this one used 16): workers run them all, so
 * jobs left waiting there by an older API are run. Only the first sessionLanes.length get new jobs.
 */
export const sessionLaneQueues = laneNames('sessions-lane', 16);
const sessionLane: QueueDefinition = {
  concurrency: 1,
  globalConcurrency: 1,
  // A lane is blocked while its job is active: when a worker dies holding it, the job must return
  // to the lane within seconds, not BullMQ's 30-60 s. The lock is renewed every 1.5 s; another worker
  // takes the job back within 3 s + 1.5 s. A job stalled more than once is not failed (that would
  // lose the message): its handler is idempotent, so running it again is safe.
  locks: { lockDuration: 3_000, stalledInterval: 1_500, maxStalledCount: 50 },
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
  // Messaging-app channel: outbound sends to the provider.
  chatapp: { concurrency: 8, jobOptions: retrying(6, 1000) },
  // Channels behind the channel contract (sms, slack, email): outbound sends to their providers.
  channels: { concurrency: 8, jobOptions: retrying(6, 1000) },
  // Agent runs (messaging-app inbound messages, web chat turns, delegated tasks): model calls kept apart from sends.
  agent: { concurrency: 8, jobOptions: retrying(3, 1000) },
  // CRM: lead webhook batches.
  crm: { concurrency: 8, jobOptions: retrying(5, 500) },
  // SRE automation: incidents, tickets, runbooks, escalations.
  sre: { concurrency: 8, jobOptions: retrying(8, 1000) },
  // Alert ingestion, kept apart from the rest of SRE so that many payloads can be active at once: the
  // ingest handler writes the payloads active in one process together (group commit). Twice its
  // largest batch (maxBatch in shared/sre/alerts/ingest.ts), so the next batch fills during a write.
  'sre-alerts': { concurrency: 128, jobOptions: retrying(8, 1000) },
  // Portal: text extraction and full-text indexing of uploaded documents.
  portal: { concurrency: 2, jobOptions: retrying(3, 2000) },
  // SRE discovery and monitor deployment (long runs kept apart from alert ingestion).
  discovery: { concurrency: 2, jobOptions: retrying(3, 5000) },
} satisfies Record<string, QueueDefinition>;

/** Partitioned queues' lanes (see sessionLanes). */
const laneQueueDefinitions: Record<string, QueueDefinition> = Object.fromEntries(sessionLaneQueues.map((name) => [name, sessionLane]));

export type QueueName = keyof typeof queueDefinitions | (typeof sessionLaneQueues)[number];

const define = <S extends z.ZodType>(def: JobDefinition<S> & { queue: QueueName }) => def;

/**
 * The job id of a scheduled tick, from the slot start its payload names: equal for every process
 * ticking in the same slot, so BullMQ keeps one job per slot.
 */
const slotJobId = (job: string, slot: string) => `${job}-${Date.parse(slot) / 1000}`;

/** Every job of the platform, by name ("<domain>.<action>"). */
export const jobDefinitions = {
  // --- sessions -------------------------------------------------------------
  // Persist one accepted event of a session's stream, then broadcast it (lane = hash of the session).
  // Kept for jobs enqueued before sessions.deliver-batch; nothing enqueues it any more.
  'sessions.deliver': define({
    queue: 'sessions-lane-0',
    schema: deliverJobSchema,
    partition: { lanes: sessionLaneQueues, key: (p) => p.session_id },
    jobId: (p) => (p.kind === 'message' ? p.message_id : p.event_id),
  }),
  // Persist then broadcast a group of accepted events of one lane, in order (shared/sessions/lanes.ts):
  // one job per group instead of one per event, so the queue's Redis work is paid once per group.
  // Every event of a group hashes to the same lane; the id is the first event's.
  'sessions.deliver-batch': define({
    queue: 'sessions-lane-0',
    schema: deliverBatchSchema,
    partition: { lanes: sessionLanes, key: (p) => p.events[0]!.session_id },
    // Lanes of earlier releases (sessionLaneQueues): their waiting jobs still run.
    formerQueues: sessionLaneQueues,
    jobId: (p) => {
      const first = p.events[0]!;
      return `batch-${first.kind === 'message' ? first.message_id : first.event_id}`;
    },
  }),
  // The model's one-line summary of a session that went idle or closed (portal history). One job per
  // session and request moment: a session idle again later gets a fresh summary.
  'sessions.summarize': define({
    queue: 'agent',
    schema: z.object({ session_id: z.guid(), requested_at: z.iso.datetime() }),
    jobId: (p) => `summarize-${p.session_id}-${Date.parse(p.requested_at)}`,
  }),
  // Close every live session past its resume window (one run per scheduler slot).
  'sessions.expire': define({ queue: 'sessions', schema: z.object({ slot: z.string() }), jobId: (p) => slotJobId('sessions.expire', p.slot) }),

  // --- chatapp --------------------------------------------------------------
  /** Deliver one recorded outbound message to the provider. */
  'chatapp.send': define({ queue: 'chatapp', schema: z.object({ message_id: z.guid() }), jobId: (p) => `send-${p.message_id}` }),
  /** Process one recorded inbound message: user, window, session, agent, publish, reply. */
  'chatapp.inbound': define({ queue: 'agent', schema: z.object({ message_id: z.guid() }), jobId: (p) => `inbound-${p.message_id}` }),
  /** Answer one web chat turn with the agent and publish the reply. */
  'chatapp.webchat': define({
    queue: 'agent',
    schema: z.object({ turn_id: z.guid(), session_id: z.guid(), interaction_id: z.guid(), message: z.string() }),
    jobId: (p) => `webchat-${p.turn_id}`,
  }),

  // --- channels (sms, slack, email: shared/channels) ---------------------------
  /** Process one recorded inbound channel message: user, session, interaction, agent, publish, reply. */
  'channels.inbound': define({ queue: 'agent', schema: z.object({ message_id: z.guid() }), jobId: (p) => `channel-inbound-${p.message_id}` }),
  /** Deliver one recorded outbound channel message to its provider. */
  'channels.send': define({ queue: 'channels', schema: z.object({ message_id: z.guid() }), jobId: (p) => `channel-send-${p.message_id}` }),

  /** Run one task delegated to the agent through the tool gateway (agent_delegate). */
  'agent.delegate': define({ queue: 'agent', schema: z.object({ run_id: z.guid() }), jobId: (p) => `agent-delegate-${p.run_id}` }),

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
  // One accepted webhook payload: dedup upsert of its alerts, then incident rules and runbooks.
  'sre.alerts-ingest': define({
    queue: 'sre-alerts',
    formerQueues: ['sre'],
    schema: z.object({
      payload_id: z.uuid(),
      // sha256 of the body as received (webhookPayloadId); absent on jobs queued by an older API.
      body_digest: z.string().regex(/^[0-9a-f]{64}$/).optional(),
      source_id: z.uuid(),
      source: z.string(),
      received_at: z.iso.datetime(),
      alerts: normalizedAlerts,
    }),
    jobId: (p) => `alerts-ingest-${p.payload_id}`,
    // A job holds a whole payload (~30 kB for 100 alerts): completed ones are dropped at once, which
    // also spares the hot path the trimming of the completed set after every job. Idempotency rests on
    // sre_alert_payloads: a sender's retry has the same payload id (webhookPayloadId), or the same body
    // digest under an adjacent window's id, and, when its first job is gone already, adds a job that
    // writes nothing.
    options: { removeOnComplete: true },
  }),
  // Creates the issue-tracker issue of an incident; retried with backoff while the tracker is down.
  'sre.incident-ticket': define({
    queue: 'sre',
    // `slot` (the incidents tick's) is accepted for jobs queued before; the id is the incident's alone, so
    // the tick's re-enqueue of a missing issue adds nothing while the first job still retries.
    schema: z.object({ incident_id: z.uuid(), slot: z.iso.datetime().optional() }),
    jobId: (p) => `incident-ticket-${p.incident_id}`,
    options: { attempts: 10, backoff: { type: 'exponential', delay: 500 } },
  }),
  // Brings the incident's tracker issue in step with a resolve, close or reopen (state change, then a comment).
  'sre.incident-ticket-sync': define({
    queue: 'sre',
    schema: z.object({ incident_id: z.uuid(), event: z.enum(['close', 'reopen']), status: z.string(), by: z.string(), note: z.string().optional() }),
    options: { attempts: 10, backoff: { type: 'exponential', delay: 500 } },
  }),
  // Asks the language model once for a group of new entities (one type, one template signature) and stores its rules for each.
  'sre.monitors-propose': define({
    queue: 'sre',
    schema: z.object({ signature: z.string(), entity_ids: z.array(z.uuid()).min(1) }),
    options: { attempts: 3, backoff: { type: 'exponential', delay: 5000 } },
  }),
  // POSTs one escalation of an incident to the notification webhook.
  'sre.incident-escalation-notify': define({
    queue: 'sre',
    schema: z.object({ incident_id: z.uuid(), reason: z.string(), escalated_by: z.string(), escalated_at: z.iso.datetime() }),
  }),
  // Tick: escalates incidents unacknowledged for ESCALATION_AFTER; re-enqueues missing tracker issues.
  'sre.incidents-tick': define({ queue: 'sre', schema: z.object({ slot: z.iso.datetime() }), jobId: (p) => slotJobId('sre.incidents-tick', p.slot) }),
  // Starts one runbook execution through its workflow's webhook.
  'sre.runbook-execute': define({
    queue: 'sre',
    schema: z.object({ execution_id: z.uuid() }),
    options: { attempts: 5, backoff: { type: 'exponential', delay: 1000 } },
    jobId: (p) => `runbook-execute-${p.execution_id}`,
  }),
  // Tick: clears flapping of alerts stable for FLAP_WINDOW (they become eligible for incidents and runbooks).
  'sre.alerts-tick': define({ queue: 'sre', schema: z.object({ slot: z.iso.datetime() }), jobId: (p) => slotJobId('sre.alerts-tick', p.slot) }),
  // Tick: refreshes running executions from the automation API, times out overdue ones, re-enqueues lost ones.
  'sre.runbooks-tick': define({ queue: 'sre', schema: z.object({ slot: z.iso.datetime() }), jobId: (p) => slotJobId('sre.runbooks-tick', p.slot) }),

  // --- portal ---------------------------------------------------------------
  // Extracts and indexes one uploaded document (pending → processing → indexed | failed). `request_id`
  // names one upload or re-index request, so a repeat of that request is one job while a later
  // re-index is a new one; running the same job twice replaces the chunks with the same chunks.
  'portal.index-document': define({
    queue: 'portal',
    schema: z.object({ document_id: z.guid(), request_id: z.guid() }),
    jobId: (p) => `index-document-${p.request_id}`,
  }),

  // --- discovery ------------------------------------------------------------
  // One discovery run: a manual trigger names the run it opened; a scheduled tick names its slot.
  'discovery.run': define({
    queue: 'discovery',
    schema: z.union([
      z.object({ trigger: z.literal('manual'), run_id: z.guid() }),
      z.object({ trigger: z.literal('schedule'), slot: z.iso.datetime({ offset: true }) }),
    ]),
    // A run's job is queued once; a slot's job once for every process ticking in it.
    jobId: (p) => (p.trigger === 'manual' ? `discovery.run-${p.run_id}` : slotJobId('discovery.run', p.slot)),
  }),
} satisfies Record<string, ReturnType<typeof define>>;

export type JobName = keyof typeof jobDefinitions;
export type JobPayload<N extends JobName> = z.input<(typeof jobDefinitions)[N]['schema']>;
/** A job's payload as its handler receives it (parsed by the job's schema). */
export type JobData<N extends JobName> = z.output<(typeof jobDefinitions)[N]['schema']>;

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
    // Connection errors are retried by ioredis; log them instead of letting them surface as unhandled events.
    q.on('error', (err) => reportRedisError(`queue ${name}`, err));
    // Each request waiting on a job (Job.waitUntilFinished) listens for the queue closing until its job
    // ends; many at once is normal load, not a leak.
    q.setMaxListeners(0);
    open.set(name, q);
  }
  return q;
}

const listening = new Map<string, Promise<QueueEvents>>();

/**
 * The (cached, ready) QueueEvents listener of a job's queue, for waiting on one of its jobs
 * (Job.waitUntilFinished). Partitioned jobs spread over lanes and have no single queue to listen to.
 */
export function jobEvents(name: JobName): Promise<QueueEvents> {
  const def: JobDefinition = jobDefinitions[name];
  if (def.partition) throw new Error(`job "${name}" is partitioned over lanes: no single queue to listen to`);
  let qe = listening.get(def.queue);
  if (!qe) {
    const events = new QueueEvents(def.queue, { connection: blockingConnection(), prefix: config().queues.prefix });
    events.on('error', (err) => reportRedisError(`queue events ${def.queue}`, err));
    qe = events.waitUntilReady().then(() => events);
    listening.set(def.queue, qe);
  }
  return qe;
}

/** The job options of one job: its queue's, its own, its idempotency id and the caller's. */
export function jobOptions(def: JobDefinition, payload: unknown, extra: JobsOptions = {}): JobsOptions {
  const jobId = def.jobId?.(payload);
  return { ...def.options, ...(jobId !== undefined ? { jobId } : {}), ...extra };
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

/** Closes every opened Queue and QueueEvents connection. */
export async function closeQueues(): Promise<void> {
  const qs = [...open.values()];
  const listeners = [...listening.values()];
  open.clear();
  listening.clear();
  // Redis away: a graceful close may fail; drop the connection instead.
  await Promise.all([...qs.map((q) => q.close().catch(() => void q.disconnect().catch(() => undefined))), ...listeners.map(async (qe) => (await qe).close().catch(() => undefined))]);
}
