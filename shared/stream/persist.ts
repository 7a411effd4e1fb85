/**
 * The worker side of the stream: write accepted events to Postgres, then publish them on the bus,
 * each session's in order. A lane job (stream.deliver) does it for the sessions of its group that
 * are not parked, and parks a session when a write fails for it (parked.ts), so the lane moves on.
 * Safe to run twice: a rerun finds the rows written, writes nothing, and publishes the same
 * envelopes with the same sequences again (subscribers drop a sequence they have seen).
 */
import knexFactory, { type Knex } from 'knex';
import { DelayedError, type Job } from 'bullmq';
import client from 'prom-client';
import { publishEvent, type BusEvent } from '../bus.js';
import { config } from '../config.js';
import { isUniqueViolation, knexOptions } from '../db/index.js';
import { closeAtShutdown } from '../lifecycle.js';
import { logger } from '../logger.js';
import { metricsRegistry, metricPrefix } from '../metrics.js';
import { unavailableDependency } from '../outages.js';
import { eventSequence } from '../sessions/events.store.js';
import { appendMessages, appendStreamEvent, publishableState, type AppendMessage } from './stream.store.js';
import { appendMessageOnce, type KeyedAppendOutcome } from './idempotency.js';
import { anyParked, drainRest, holdIfParked, park, parkedHead, removeParkedHead } from './parked.js';
import { deliverSchema, finalEventData, maxEventsPerJob, streamEventSchema, type StreamEvent } from './stream.schemas.js';
import { queue } from '../queues.js';
import { refuseEvents } from './publishable.js';

type MessageEvent = Extract<StreamEvent, { kind: 'message' }>;
type OtherEvent = Extract<StreamEvent, { kind: 'event' }>;
type ErasedEvent = Extract<StreamEvent, { kind: 'erased' }>;

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
    closeAtShutdown('stream postgres', () => {
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
  const refused: MessageEvent[] = [];
  const envelopes = run.map((m, i) => {
    const outcome = outcomes[i]!;
    if (outcome.kind === 'appended' || outcome.kind === 'already') return messageEnvelope(m, outcome.sequence);
    dropped.inc({ reason: outcome.kind });
    logger('stream').warn({ session_id: m.session_id, message_id: m.message_id, outcome: outcome.kind }, 'message not persisted');
    if (outcome.kind === 'no-session') refused.push(m);
    return undefined;
  });
  await refuse(refused.map((m) => ({ id: m.message_id, session_id: m.session_id })));
  return envelopes;
}

/** Tells the requests waiting for these events (and every process's session cache) that their session was closed or gone. */
async function refuse(events: Array<{ id: string; session_id: string }>): Promise<void> {
  if (!events.length) return;
  const sessionIds = [...new Set(events.map((e) => e.session_id))];
  const states = new Map(await Promise.all(sessionIds.map(async (id) => [id, await publishableState(id)] as const)));
  await refuseEvents(events.map((e) => ({ ...e, reason: states.get(e.session_id) ? 'closed' : 'gone' })));
}

async function persistEvent(e: OtherEvent, k: Knex): Promise<BusEvent | undefined> {
  const envelope = { event_type: e.event_type, session_id: e.session_id, channel: e.channel, data: e.data };
  const sequence =
    (await appendStreamEvent({ event_id: e.event_id, session_id: e.session_id, interaction_id: e.interaction_id, event_type: e.event_type, envelope }, k)) ??
    (await eventSequence(e.event_id, k));
  if (sequence === undefined) {
    dropped.inc({ reason: 'no-session' });
    await refuse([{ id: e.event_id, session_id: e.session_id }]);
    return undefined;
  }
  return { ...envelope, id: e.event_id, sequence: Number(sequence) };
}

/** An erased session's final event: nothing is left to write it to; its sequence was taken by the erasure. */
const erasedEnvelope = (e: ErasedEvent): BusEvent => ({
  id: e.event_id,
  sequence: e.sequence,
  event_type: 'CONTEXT_UPDATE',
  session_id: e.session_id,
  channel: e.channel,
  data: finalEventData(e.reason),
});

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

/**
 * Writes then publishes runs of different sessions (at most one each): every message of them in one
 * statement, each other event in one of its own, side by side. Resolves with the number published
 * per run; fails as a whole when any write fails.
 */
async function writeRuns(runs: StreamEvent[][]): Promise<number[]> {
  const k = streamDb();
  const messages = runs.filter((r) => r[0]!.kind === 'message').flat() as MessageEvent[];
  const [messageEnvelopes, eventEnvelopes] = await Promise.all([
    messages.length ? persistMessages(messages, k) : [],
    Promise.all(runs.filter((r) => r[0]!.kind === 'event').map((r) => persistEvent(r[0] as OtherEvent, k))),
  ]);
  let m = 0;
  let e = 0;
  const envelopes = runs.map((r) => {
    const head = r[0]!;
    if (head.kind === 'message') return messageEnvelopes.slice(m, (m += r.length));
    return [head.kind === 'erased' ? erasedEnvelope(head) : eventEnvelopes[e++]];
  });
  // One connection, commands sent in call order: subscribers get each session's events in stream order.
  await Promise.all(envelopes.flat().map((env) => env && publishEvent(env)));
  return envelopes.map((list) => list.filter(Boolean).length);
}

/**
 * How long a lane job waits here for Postgres or Redis to come back: an outage is everyone's, so the
 * lane waits holding its job (parking every session would only move the wait) and its later jobs
 * keep their order behind it.
 */
const outageHoldMs = 5 * 60_000;

/** Runs `step`, again while Postgres or Redis is out (up to outageHoldMs); any other failure is thrown. */
async function throughOutages<T>(step: () => Promise<T>): Promise<T> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (unavailableDependency(err) === undefined || Date.now() - started > outageHoldMs) throw err;
      await new Promise((r) => setTimeout(r, Math.min(1_000, 25 * 2 ** attempt)));
    }
  }
}

/**
 * Writes one run of each of several sessions; per run, the number published or the error that
 * failed it. A failure of the shared statement is one session's (a row locked elsewhere, a payload
 * Postgres refuses) or everyone's: each run is then written alone, so only the runs that fail alone
 * fail.
 */
async function writeRound(runs: StreamEvent[][]): Promise<Array<number | { failed: unknown }>> {
  try {
    return await throughOutages(() => writeRuns(runs));
  } catch (err) {
    if (runs.length === 1) return [{ failed: err }];
    return Promise.all(runs.map((run) => throughOutages(() => writeRuns([run])).then(([n]) => n!, (failed: unknown) => ({ failed }))));
  }
}

/** Events grouped by session, in the order each session's first event came. */
function bySession(events: StreamEvent[]): Map<string, StreamEvent[]> {
  const sessions = new Map<string, StreamEvent[]>();
  for (const e of events) {
    const list = sessions.get(e.session_id);
    if (list) list.push(e);
    else sessions.set(e.session_id, [e]);
  }
  return sessions;
}

/**
 * A lane job (stream.deliver): events accepted into sessions of the lane, written and published
 * in each session's order, the sessions together (one statement for their messages). A parked
 * session's events join its parked ones instead; a write that fails for a session (its row locked
 * past STREAM_LOCK_TIMEOUT_MS, a payload Postgres refuses) parks it with that event and those after
 * it, so the lane goes on with the other sessions.
 */
export async function deliverLaneJob(events: StreamEvent[]): Promise<{ published: number; parked: number }> {
  const sessions = [...bySession(events)];
  // Redis out while parking or checking: the lane holds the job (a failed job would let later ones
  // overtake it). Repeating a hold or park that did happen parks events twice, which writes nothing twice.
  // One check for the whole run; only when some session is parked, each is held (or not) on its own.
  const held = (await throughOutages(() => anyParked(sessions.map(([sessionId]) => sessionId))))
    ? await throughOutages(() => Promise.all(sessions.map(([sessionId, list]) => holdIfParked(sessionId, list))))
    : sessions.map(() => false);
  let parked = sessions.reduce((n, [, list], i) => n + (held[i] ? list.length : 0), 0);
  let published = 0;
  let pending = sessions.filter((_, i) => !held[i]).map(([sessionId, list]) => ({ sessionId, runs: runsOf(list) }));
  while (pending.length) {
    const heads = pending.map((p) => p.runs.shift()!);
    const outcomes = await writeRound(heads);
    for (let i = 0; i < pending.length; i++) {
      const outcome = outcomes[i]!;
      if (typeof outcome === 'number') {
        published += outcome;
        continue;
      }
      const { sessionId, runs } = pending[i]!;
      const rest = [heads[i]!, ...runs].flat();
      await throughOutages(() => park(sessionId, rest, outcome.failed));
      parked += rest.length;
      runs.length = 0;
    }
    pending = pending.filter((p) => p.runs.length);
  }
  return { published, parked };
}

/** Jobs a lane run reads from the head of its lane at most (each one read costs Redis work, taken or not). */
const takeAlongJobs = 100;

/**
 * A lane job's run: its own events and those of the jobs waiting behind it on its lane (oldest
 * first, up to takeAlongJobs jobs and maxEventsPerJob events in all), written together; the jobs
 * taken along are then removed. While a lane job runs no other job of its lane can start (the lane's global concurrency is 1), so
 * the waiting ones are safe to take; one that is gone or started by then is left to its own run,
 * which writes nothing twice (events carry their ids), as does a rerun after a crash between the
 * write and the removal.
 */
export async function deliverLaneRun(events: StreamEvent[], job: Job): Promise<{ published: number; parked: number; jobs: number }> {
  const lane = queue(job.queueName);
  const behind: Job[] = [];
  let total = events.length;
  for (const next of await lane.getJobs(['wait'], 0, takeAlongJobs - 1, true)) {
    if (next.id === job.id) continue;
    const parsed = next.name === job.name ? deliverSchema.safeParse(next.data) : undefined;
    if (!parsed?.success) break;
    if (total + parsed.data.events.length > maxEventsPerJob) break;
    total += parsed.data.events.length;
    events = events.concat(parsed.data.events);
    behind.push(next);
  }
  const outcome = await deliverLaneJob(events);
  await Promise.all(behind.map((taken) => taken.remove().catch(() => undefined)));
  return { ...outcome, jobs: 1 + behind.length };
}

const setAside = new client.Counter({
  name: `${metricPrefix}stream_events_set_aside_total`,
  help: 'Parked session events given up after their retries (each is a failed stream.drain-parked job with its reason and the event)',
  registers: [metricsRegistry],
});

/** How long a drain waits out a lock or an outage before it steps aside for a while (its queue has few slots per process). */
const drainHoldMs = 10_000;

/** Waits that end by themselves: a lock held elsewhere, a statement cut short, a conflict with another transaction. */
const waitCodes = new Set(['55P03', '57014', '40001', '40P01']);
const waitsOut = (err: unknown) => waitCodes.has((err as { code?: string })?.code ?? '') || unavailableDependency(err) !== undefined;

/**
 * A parked session's drain (stream.drain-parked): writes its parked events from the oldest, each
 * removed once written. A lock or an outage is waited out here (the session's events keep waiting,
 * nobody else's do), stepping aside every drainHoldMs so a few stuck sessions cannot hold every
 * slot of the queue; any other failure fails the attempt, and the queue retries it with backoff.
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
      const waitingSince = Date.now();
      for (let attempt = 1; ; attempt++) {
        try {
          written += (await writeRuns([[parsed.data]]))[0]!;
          break;
        } catch (err) {
          if (!waitsOut(err)) throw err;
          if (Date.now() - waitingSince > drainHoldMs) {
            // A long lock or outage: give the queue's slot to other parked sessions and come back, using no attempt.
            await job.moveToDelayed(Date.now() + 1_000, job.token);
            throw new DelayedError();
          }
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
