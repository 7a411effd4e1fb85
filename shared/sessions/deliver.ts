/**
 * The worker side of the stream: persist one accepted event of a session, then broadcast it on the
 * bus. Runs in the session's lane (one job at a time), so sequences follow acceptance order; the
 * messages of concurrently running lanes are written together (GroupAppender).
 * Safe to run twice: a retry finds the row already written, persists nothing, and publishes the
 * same envelope with the same sequence again (subscribers drop a sequence they have seen).
 */
import { messageRefused, publishEvent, type BusEvent } from '../bus.js';
import { publishableState } from './sessions.store.js';
import { logger } from '../logger.js';
import { unavailableDependency } from '../outages.js';
import { appendStreamEvent, eventSequence } from './events.store.js';
import { GroupAppender } from './group-append.js';
import type { DeliverJob } from './schemas.js';

type MessageJob = Extract<DeliverJob, { kind: 'message' }>;
type EventJob = Extract<DeliverJob, { kind: 'event' }>;

/** The MESSAGE envelope of a message (data as the spec lists it, plus message_id and sequence). */
export function messageEnvelope(job: MessageJob, sequence: number): BusEvent {
  return {
    id: job.message_id,
    sequence,
    event_type: 'MESSAGE',
    session_id: job.session_id,
    channel: job.channel,
    data: { role: job.role, content: job.content, interaction_id: job.interaction_id, metadata: job.metadata, message_id: job.message_id, sequence },
  };
}

const appender = new GroupAppender();

/** Appends consecutive messages of one session (one group commit); the envelope of each persisted one. */
async function persistRun(jobs: MessageJob[]): Promise<Array<BusEvent | undefined>> {
  const outcomes = await appender.appendRun(
    jobs.map((job) => {
      const { sequence: _seq, id: _id, ...envelope } = messageEnvelope(job, 0);
      return { ...job, envelope };
    }),
  );
  return Promise.all(
    jobs.map(async (job, i) => {
      const outcome = outcomes[i]!;
      if (outcome.kind === 'appended' || outcome.kind === 'already') return messageEnvelope(job, outcome.sequence);
      logger('sessions').warn({ session_id: job.session_id, message_id: job.message_id, outcome: outcome.kind }, 'message not persisted');
      if (outcome.kind === 'no-session') {
        // The API accepted it from its cache of live sessions: tell the waiting request why it was not persisted.
        const state = await publishableState(job.session_id, null);
        await publishEvent({ id: job.message_id, sequence: 0, event_type: messageRefused, session_id: job.session_id, channel: job.channel, data: { reason: state ? 'closed' : 'gone' } });
      }
      return undefined;
    }),
  );
}

async function persistEvent(job: EventJob): Promise<BusEvent | undefined> {
  const envelope = { event_type: job.event_type, session_id: job.session_id, channel: job.channel, data: job.data };
  const sequence =
    (await appendStreamEvent({ event_id: job.event_id, session_id: job.session_id, interaction_id: job.interaction_id, event_type: job.event_type, envelope })) ??
    (await eventSequence(job.event_id));
  if (sequence === undefined) return undefined;
  return { ...envelope, id: job.event_id, sequence: Number(sequence) };
}

const inlineAttempts = 3;
/**
 * How long a run waits here for Postgres or Redis to come back. The API accepts messages without
 * asking Postgres (publish.ts), so an outage must not use up the job's attempts (lost) nor move it
 * to the delayed set (overtaken by later groups of the lane): the lane waits, holding its job.
 */
const outageHoldMs = 5 * 60_000;

/**
 * Persists then publishes consecutive events of one session: a run of messages (one append) or one
 * other event. Transient failures are retried here first, so the lane is held (and later events of
 * the session wait) instead of letting a later event overtake these.
 */
async function deliverRun(jobs: DeliverJob[]): Promise<Array<BusEvent | undefined>> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      const first = jobs[0]!;
      const events = first.kind === 'event' ? [await persistEvent(first)] : await persistRun(jobs as MessageJob[]);
      // One connection, commands sent in call order: subscribers get them in stream order.
      await Promise.all(events.map((e) => e && publishEvent(e)));
      return events;
    } catch (err) {
      const outage = unavailableDependency(err) !== undefined;
      if (outage ? Date.now() - started > outageHoldMs : attempt >= inlineAttempts) throw err;
      await new Promise((r) => setTimeout(r, outage ? Math.min(1_000, 25 * 2 ** attempt) : 25 * attempt));
    }
  }
}

/** Persists then publishes one stream event (see deliverRun). */
export async function deliver(job: DeliverJob): Promise<BusEvent | undefined> {
  const [event] = await deliverRun([job]);
  return event;
}

/** A session's events cut into what deliverRun takes: runs of consecutive messages, other events alone. */
function runsOf(chain: DeliverJob[]): DeliverJob[][] {
  const runs: DeliverJob[][] = [];
  for (const e of chain) {
    const last = runs[runs.length - 1];
    if (e.kind === 'message' && last?.[0]!.kind === 'message') last.push(e);
    else runs.push([e]);
  }
  return runs;
}

/**
 * Persists then publishes a lane's group of events (sessions.deliver-batch): each session's events
 * in acceptance order (its consecutive messages by one append), the sessions side by side, so their
 * messages share group commits. A failure fails the whole job after the other sessions are done;
 * its retry persists nothing twice (appends are idempotent) and republishes what was done with the
 * same sequences.
 */
export async function deliverBatch(events: readonly DeliverJob[]): Promise<{ published: number }> {
  const bySession = new Map<string, DeliverJob[]>();
  for (const e of events) {
    const chain = bySession.get(e.session_id);
    if (chain) chain.push(e);
    else bySession.set(e.session_id, [e]);
  }
  let published = 0;
  const outcomes = await Promise.allSettled(
    [...bySession.values()].map(async (chain) => {
      for (const run of runsOf(chain)) published += (await deliverRun(run)).filter(Boolean).length;
    }),
  );
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) throw failed.reason;
  return { published };
}
