/**
 * The one place that lists every queue and job: name, payload schema, retry/backoff and retention.
 * Job names are a public contract (they are stored in Redis with each job): never rename one casually.
 * Enqueue only through `enqueue()`; workers parse each payload with the same schema on receipt.
 */
import { Queue, QueueEvents, type JobsOptions } from 'bullmq';
import { z } from 'zod';
import { deliverSchema, eventIdOf } from './stream/stream.schemas.js';
import { config } from './config.js';
import { normalizedAlerts } from './sre/alerts/payloads.js';
import { blockingConnection, bullConnection, closeOrDrop } from './redis.js';
import { reportRedisError } from './outages.js';
import { currentRequestId, jobRequestIdKey } from './request-context.js';
import { queueTelemetry } from './telemetry.js';
import { createHash } from 'node:crypto';
import { leadBatchJob } from './crm/crm.schemas.js';

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
  partition?: { lanes(): readonly string[]; key(payload: z.output<S>): string };
  /** Per-job overrides of the queue's options. */
  options?: JobsOptions;
  /**
   * Deterministic job id for idempotent enqueueing (a repeat with the same id is ignored while the job
   * is kept); undefined lets BullMQ number the job. Method syntax: checked bivariantly, so typed
   * definitions fit the registry.
   */
  jobId?(payload: z.output<S>): string | undefined;
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
 * The lanes of the session stream (STREAM_LANES): a session's events all go through the lane its
 * id hashes to, one job at a time across every worker process, so its order is the order of
 * acceptance; lanes run side by side in any process (shared/stream/index.ts).
 */
export const streamLanes = (count = config().stream.lanes) => laneNames('stream-lane', count);
const streamLane: QueueDefinition = {
  concurrency: 1,
  globalConcurrency: 1,
  // A lane is blocked while its job is active: when a worker dies holding it, the job must return
  // to the lane within seconds, not BullMQ's 30-60 s. The lock is renewed every 1.5 s; another worker
  // takes the job back within 3 s + 1.5 s. A job stalled more than once is not failed (that would
  // lose its events): its handler is idempotent, so running it again is safe.
  locks: { lockDuration: 3_000, stalledInterval: 1_500, maxStalledCount: 50 },
  // A lane job parks what it cannot write instead of failing (a retry would let later jobs of the
  // lane overtake it); these attempts cover Redis failing under the job itself.
  jobOptions: { attempts: 8, backoff: { type: 'exponential', delay: 50 }, removeOnComplete: true, removeOnFail: retention.removeOnFail },
};

/** A stable lane index of a key (FNV-1a), so one key always maps to the same lane. */
export function laneOf(key: string, lanes: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % lanes;
}

/** Which table holds a channel job's message: `chatapp` for the messaging app's (chatapp_messages), absent for channel_messages. */
const recordedIn = z.literal('chatapp').optional();

/** Every queue of the platform. */
export const queueDefinitions = {
  // Session memory: expiry of idle sessions.
  sessions: { concurrency: 32, jobOptions: retrying(8, 100) },
  // The session stream's parked sessions: one job per session whose writes failed in its lane, writing
  // its held events in order (shared/stream/parked.ts). Attempts count writes that failed for the
  // payload; a wait for a lock or an outage is waited out inside the job.
  'stream-parked': { concurrency: 16, jobOptions: retrying(4, 250) },
  // Messaging-app phone codes, and the sends queued before the messaging app joined `channels`.
  chatapp: { concurrency: 8, jobOptions: retrying(6, 1000) },
  // Channels behind the channel contract (sms, slack, email, the messaging app): outbound sends to their providers.
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
  // Portal: text extraction and full-text indexing of uploaded documents. Each extraction runs in a process
  // of its own within DOCUMENT_EXTRACT_TIMEOUT_MS and DOCUMENT_EXTRACT_MAX_MEMORY_MB (shared/portal/extract.ts).
  portal: { concurrency: 2, jobOptions: retrying(3, 2000) },
  // SRE discovery and monitor deployment (long runs kept apart from alert ingestion).
  discovery: { concurrency: 2, jobOptions: retrying(3, 5000) },
  // Writing the Prometheus rule file: run by the worker pool that shares RULES_DIR with Prometheus
  // (WORKER_QUEUES=rules there), so web processes on other hosts need no access to it. One at a time;
  // a failed deploy is answered to its caller, not retried behind their back.
  rules: { concurrency: 1, jobOptions: retrying(1, 1000) },
  // Day-2 upkeep: deleting rows past their retention (RETENTION_*), one run at a time.
  maintenance: { concurrency: 1, jobOptions: retrying(3, 60_000) },
} satisfies Record<string, QueueDefinition>;

export type QueueName = keyof typeof queueDefinitions | `stream-lane-${number}`;

const define = <S extends z.ZodType>(def: JobDefinition<S> & { queue: QueueName }) => def;

/**
 * The job id of a scheduled tick, from the slot start its payload names: equal for every process
 * ticking in the same slot, so BullMQ keeps one job per slot.
 */
const slotJobId = (job: string, slot: string) => `${job}-${Date.parse(slot) / 1000}`;

/** Every job of the platform, by name ("<domain>.<action>"). */
export const jobDefinitions = {
  // --- the session stream (shared/stream/) ----------------------------------
  // Persist then broadcast events accepted into sessions of one lane (stream/enqueue.ts), each
  // session's in order. The lane is the hash of the session; the id is the first event's, so a
  // repeated add is one job.
  'stream.deliver': define({
    queue: 'stream-lane-0',
    schema: deliverSchema,
    partition: { lanes: streamLanes, key: (p) => p.events[0]!.session_id },
    jobId: (p) => `deliver-${eventIdOf(p.events[0]!)}`,
  }),
  // Write the events a session's lane set aside for it (a failed write), in order, then unpark it.
  // One job per parking, named by the event that parked the session.
  'stream.drain-parked': define({
    queue: 'stream-parked',
    schema: z.object({ session_id: z.guid(), parked_by: z.guid() }),
    jobId: (p) => `parked-${p.parked_by}`,
  }),

  // --- sessions -------------------------------------------------------------
  // The model's one-line summary of a session that went idle or closed (portal history). One job per
  // session and request moment: a session idle again later gets a fresh summary.
  'sessions.summarize': define({
    queue: 'agent',
    schema: z.object({ session_id: z.guid(), requested_at: z.iso.datetime() }),
    jobId: (p) => `summarize-${p.session_id}-${Date.parse(p.requested_at)}`,
  }),
  // Close every live session past its resume window (one run per scheduler slot).
  'sessions.expire': define({ queue: 'sessions', schema: z.object({ slot: z.string() }), jobId: (p) => slotJobId('sessions.expire', p.slot) }),

  // --- channels (sms, slack, email, the messaging app: shared/channels) ---------
  /** Process one recorded inbound channel message: user, window, session, interaction, agent, publish, reply (shared/channels/turn.ts). */
  'channels.inbound': define({ queue: 'agent', schema: z.object({ message_id: z.guid(), channel: recordedIn }), jobId: (p) => `channel-inbound-${p.message_id}` }),
  /** Deliver one recorded outbound channel message to its provider. */
  'channels.send': define({ queue: 'channels', schema: z.object({ message_id: z.guid(), channel: recordedIn }), jobId: (p) => `channel-send-${p.message_id}` }),
  /** Answer one web chat turn with the agent and publish the reply. */
  'chatapp.webchat': define({
    queue: 'agent',
    schema: z.object({ turn_id: z.guid(), session_id: z.guid(), interaction_id: z.guid(), message: z.string() }),
    jobId: (p) => `webchat-${p.turn_id}`,
  }),
  // The messaging app's former job kinds: nothing enqueues them any more; the workers still run the ones
  // queued before a deploy (as channels.inbound / channels.send with channel chatapp).
  'chatapp.send': define({ queue: 'chatapp', schema: z.object({ message_id: z.guid() }), jobId: (p) => `send-${p.message_id}` }),
  'chatapp.inbound': define({ queue: 'agent', schema: z.object({ message_id: z.guid() }), jobId: (p) => `inbound-${p.message_id}` }),

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
    schema: z.object({
      payload_id: z.uuid(),
      // sha256 of the body as received (webhookPayloadId): a retry of the body is recognised across windows.
      body_digest: z.string().regex(/^[0-9a-f]{64}$/),
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

  // Sends one phone verification code (messaging app or SMS; shared/portal/phone-proof.ts). Enqueued
  // for every request, with `code` null when the number is another account's (nothing is sent). The
  // payload carries the code: removed once sent, a failed one kept an hour (a code lapses in PHONE_CODE_TTL_MINUTES).
  'portal.phone-code': define({
    queue: 'chatapp',
    schema: z.object({ verification_id: z.guid(), phone_number: z.string().regex(/^\+[1-9]\d{1,14}$/), code: z.string().regex(/^\d{6}$/).nullable() }),
    jobId: (p) => `phone-code-${p.verification_id}`,
    options: { removeOnComplete: true, removeOnFail: { age: 3600 } },
  }),

  // --- discovery ------------------------------------------------------------
  // Deploy every monitor to Prometheus (deploy-all), on the rules pool; the request waits for the outcome.
  'sre.monitors-deploy': define({
    queue: 'rules',
    schema: z.object({ request_id: z.guid() }),
    jobId: (p) => `monitors-deploy-${p.request_id}`,
  }),
  // Tick: delete rows past their retention (shared/prune-expired.sql.ts); one job per slot however many processes tick.
  'platform.prune': define({ queue: 'maintenance', schema: z.object({ slot: z.iso.datetime() }), jobId: (p) => slotJobId('platform.prune', p.slot) }),
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
export const registry: Registry = {
  // The lanes' count is configuration: read when the registry is first used, not at import.
  get queues() {
    return { ...queueDefinitions, ...Object.fromEntries(streamLanes().map((name) => [name, streamLane])) };
  },
  jobs: jobDefinitions,
};

const open = new Map<string, Queue>();

/** The (cached) BullMQ Queue of a queue name. */
export function queue(name: string, reg: Registry = registry): Queue {
  let q = open.get(name);
  if (!q) {
    const def = reg.queues[name];
    if (!def) throw new Error(`unknown queue "${name}"`);
    // With tracing on, each job carries the trace of its enqueue to the worker (shared/telemetry.ts).
    q = new Queue(name, { connection: bullConnection(), prefix: config().queues.prefix, defaultJobOptions: def.jobOptions, ...queueTelemetry() });
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
/** The listeners behind `listening`, ready or not: closing one must not wait for a Redis that is away. */
const listeners = new Set<QueueEvents>();

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
    listeners.add(events);
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
  const lanes = def.partition.lanes();
  return lanes[laneOf(def.partition.key(payload), lanes.length)]!;
}

/** The queue a payload of a job would go to. */
export const queueOfJob = <N extends JobName>(name: N, payload: JobPayload<N>): string => queueOf(jobDefinitions[name], payload);

/** A job's data with the id of the request enqueueing it (if any), so the worker's log lines name it too. */
function withRequest(data: unknown): unknown {
  const requestId = currentRequestId();
  return requestId && data && typeof data === 'object' && !Array.isArray(data) ? { ...data, [jobRequestIdKey]: requestId } : data;
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
  return queue(queueOf(def, data), reg).add(name, withRequest(data), jobOptions(def, data, extra));
}

/** Every queue of a registry, opened (dashboard, metrics). */
export function allQueues(reg: Registry = registry): Queue[] {
  return Object.keys(reg.queues).map((name) => queue(name, reg));
}

/** Closes every opened Queue and QueueEvents connection; those Redis does not let close in time are dropped. */
export async function closeQueues(): Promise<void> {
  const closing = [...open.values(), ...listeners];
  open.clear();
  listening.clear();
  listeners.clear();
  await Promise.all(closing.map((q) => closeOrDrop(() => q.close(), () => q.disconnect())));
}
