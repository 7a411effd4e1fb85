/**
 * The worker side of the stream: write one session's accepted events to Postgres, then publish
 * them on the bus, in order. A lane job (stream.deliver) does it unless the session is parked, and
 * parks the session when a write fails for it (parked.ts), so the lane moves on.
 * Safe to run twice: a rerun finds the rows written, writes nothing, and publishes the same
 * envelopes with the same sequences again (subscribers drop a sequence they have seen).
 */
import knexFactory, { type Knex } from 'knex';
import type { Job } from 'bullmq';
import client from 'prom-client';
import { publishEvent, type BusEvent } from '../bus.js';
import { config } from '../config.js';
import { isUniqueViolation, knexOptions } from '../db/index.js';
import { onShutdown } from '../lifecycle.js';
import { logger } from '../logger.js';
import { metricsRegistry, metricPrefix } from '../metrics.js';
import { unavailableDependency } from '../outages.js';
import { appendStreamEvent, eventSequence } from '../sessions/events.store.js';
import { appendMessages, type AppendMessage } from '../sessions/messages.store.js';
import { appendMessageOnce, type KeyedAppendOutcome } from './idempotency.js';
import { drainRest, holdIfParked, park, parkedHead, removeParkedHead } from './parked.js';
import { streamEventSchema, type StreamEvent } from './schemas.js';

type MessageEvent = Extract<StreamEvent, { kind: 'message' }>;
type OtherEvent = Extract<StreamEvent, { kind: 'event' }>;

const dropped = new client.Counter({
  name: `${metricPrefix}stream_events_dropped_total`,
  help: 'Accepted session events not written because their session was closed or gone by then, or their idempotency key was taken',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

let pool: Knex | undefined;

/**
 * The stream's own pool: its statements wait at most STREAM_LOCK_TIMEOUT_MS for a session row
 * another transaction holds (then fail, and the lane parks that session), which the process-wide
 * pool must not impose on every other job.
 */
export function streamDb(): Knex {
  if (!pool) {
    const c = config().db;
    const created = knexFactory(
      knexOptions(c.url, c.poolMax, { connectMs: c.connectTimeoutMs, acquireMs: c.acquireTimeoutMs, statementMs: c.statementTimeoutMs, lockMs: config().stream.lockTimeoutMs }),
    );
    pool = created;
    onShutdown('stream postgres', () => {
      if (pool === created) pool = undefined;
      return created.destroy();
    });
  }
  return pool;
}

/** The MESSAGE envelope of a message (data as the spec lists it, plus message_id and sequence). */
export function messageEnvelope(m: MessageEvent, sequence: number): BusEvent {
  return {
    id: m.message_id,
    sequence,
    event_type: 'MESSAGE',
    session_id: m.session_id,
    channel: m.channel,
    data: { role: m.role, content: m.content, interaction_id: m.interaction_id, metadata: m.metadata, message_id: m.message_id, sequence },
  };
}

/** Appends consecutive messages of one session (one statement); the envelope of each persisted one. */
async function persistMessages(run: MessageEvent[], k: Knex): Promise<Array<BusEvent | undefined>> {
  const maxHistory = config().sessions.maxHistory;
  const batch: AppendMessage[] = run.map((m) => {
    const { sequence: _seq, id: _id, ...envelope } = messageEnvelope(m, 0);
    return { ...m, envelope };
  });
  let outcomes: KeyedAppendOutcome[];
  try {
    outcomes = await appendMessages(batch, maxHistory, k);
  } catch (err) {
    // A repeated idempotency key fails the statement: one at a time, so that message alone is refused.
    if (!isUniqueViolation(err)) throw err;
    outcomes = [];
    for (const m of batch) outcomes.push(await appendMessageOnce(m, maxHistory, k));
  }
  return run.map((m, i) => {
    const outcome = outcomes[i]!;
    if (outcome.kind === 'appended' || outcome.kind === 'already') return messageEnvelope(m, outcome.sequence);
    dropped.inc({ reason: outcome.kind });
    logger('stream').warn({ session_id: m.session_id, message_id: m.message_id, outcome: outcome.kind }, 'message not persisted');
    return undefined;
  });
}

async function persistEvent(e: OtherEvent, k: Knex): Promise<BusEvent | undefined> {
  const envelope = { event_type: e.event_type, session_id: e.session_id, channel: e.channel, data: e.data };
  const sequence =
    (await appendStreamEvent({ event_id: e.event_id, session_id: e.session_id, interaction_id: e.interaction_id, event_type: e.event_type, envelope }, k)) ??
    (await eventSequence(e.event_id, k));
  if (sequence === undefined) {
    dropped.inc({ reason: 'no-session' });
    return undefined;
  }
  return { ...envelope, id: e.event_id, sequence: Number(sequence) };
}

/** A session's events cut into what one statement writes: runs of consecutive messages, other events alone. */
export function runsOf(events: readonly StreamEvent[]): StreamEvent[][] {
  const runs: StreamEvent[][] = [];
  for (const e of events) {
    const last = runs[runs.length - 1];
    if (e.kind === 'message' && last?.[0]!.kind === 'message') last.push(e);
    else runs.push([e]);
  }
  return runs;
}

/** Writes then publishes one run; resolves with the number published. */
async function writeRun(run: StreamEvent[]): Promise<number> {
  const k = streamDb();
  const first = run[0]!;
  const events = first.kind === 'event' ? [await persistEvent(first, k)] : await persistMessages(run as MessageEvent[], k);
  // One connection, commands sent in call order: subscribers get them in stream order.
  await Promise.all(events.map((e) => e && publishEvent(e)));
  return events.filter(Boolean).length;
}

/**
 * How long a run waits here for Postgres or Redis to come back: an outage is everyone's, so the
 * lane waits holding its job (parking every session would only move the wait) and its later jobs
 * keep their order behind it.
 */
const outageHoldMs = 5 * 60_000;

/** writeRun, waiting out an outage of Postgres or Redis (up to outageHoldMs); any other failure is thrown. */
export async function writeThroughOutages(run: StreamEvent[]): Promise<number> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await writeRun(run);
    } catch (err) {
      if (unavailableDependency(err) === undefined || Date.now() - started > outageHoldMs) throw err;
      await new Promise((r) => setTimeout(r, Math.min(1_000, 25 * 2 ** attempt)));
    }
  }
}

/**
 * A lane job (stream.deliver): the events one request accepted into a session, written and
 * published in order. A parked session's events join its parked ones instead; a write that fails
 * for this session (its row locked past STREAM_LOCK_TIMEOUT_MS, a payload Postgres refuses) parks
 * the session with this event and those after it, so the lane goes on with other sessions.
 */
export async function deliverLaneJob(events: StreamEvent[]): Promise<{ published: number; parked: number }> {
  const sessionId = events[0]!.session_id;
  if (await holdIfParked(sessionId, events)) return { published: 0, parked: events.length };
  const runs = runsOf(events);
  let published = 0;
  for (let i = 0; i < runs.length; i++) {
    try {
      published += await writeThroughOutages(runs[i]!);
    } catch (err) {
      const rest = runs.slice(i).flat();
      await park(sessionId, rest, err);
      return { published, parked: rest.length };
    }
  }
  return { published, parked: 0 };
}

const setAside = new client.Counter({
  name: `${metricPrefix}stream_events_set_aside_total`,
  help: 'Parked session events given up after their retries (each is a failed stream.drain-parked job with its reason and the event)',
  registers: [metricsRegistry],
});

/** Waits that end by themselves: a lock held elsewhere, a statement cut short, a conflict with another transaction. */
const waitCodes = new Set(['55P03', '57014', '40001', '40P01']);
const waitsOut = (err: unknown) => waitCodes.has((err as { code?: string })?.code ?? '') || unavailableDependency(err) !== undefined;

/**
 * A parked session's drain (stream.drain-parked): writes its parked events from the oldest, each
 * removed once written. A lock or an outage is waited out here (the session's events keep waiting,
 * nobody else's do); any other failure fails the attempt, and the queue retries it with backoff.
 * When the last attempt fails the event is set aside: removed from the parked list and kept in this
 * failed job (its data and reason, on the queue dashboard), and the rest of the session goes on.
 */
export async function drainParked(sessionId: string, job: Job): Promise<{ written: number }> {
  let written = 0;
  for (;;) {
    const head = await parkedHead(sessionId);
    if (head === null) return { written };
    const parsed = streamEventSchema.safeParse(JSON.parse(head));
    try {
      if (!parsed.success) throw new Error(`unreadable parked event: ${parsed.error.message}`);
      for (let attempt = 1; ; attempt++) {
        try {
          written += await writeRun([parsed.data]);
          break;
        } catch (err) {
          if (!waitsOut(err)) throw err;
          await new Promise((r) => setTimeout(r, Math.min(1_000, 50 * 2 ** attempt)));
        }
      }
    } catch (err) {
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) {
        await job.updateData({ ...job.data, set_aside: parsed.success ? parsed.data : head });
        await removeParkedHead(sessionId, head);
        setAside.inc();
        logger('stream').error({ session_id: sessionId, job: job.id, err: (err as Error).message }, 'parked event set aside after its retries; the session goes on');
        await drainRest(sessionId);
      }
      throw err;
    }
    if ((await removeParkedHead(sessionId, head)) === 0) return { written };
  }
}
