/**
 * The worker side of the stream: persist one accepted event of a session, then broadcast it on the
 * bus. Runs in the session's lane (one job at a time), so sequences follow acceptance order; the
 * messages of concurrently running lanes are written together (GroupAppender).
 * Safe to run twice: a retry finds the row already written, persists nothing, and publishes the
 * same envelope with the same sequence again (subscribers drop a sequence they have seen).
 */
import { config } from '../config.js';
import { db, preparedStatement } from '../db/index.js';
import { publishEvent, type BusEvent } from '../bus.js';
import { logger } from '../logger.js';
import { appendMessage, appendMessages, type AppendMessage, type AppendOutcome } from './messages.store.js';
import { auditTypeOf } from './events.store.js';
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

interface PendingAppend {
  message: AppendMessage;
  settle(outcome: Promise<AppendOutcome>): void;
}

/** Most messages one statement appends. */
const maxGroup = 64;

/**
 * Group commit of message appends. The lanes of a worker process run concurrently, each with one
 * message in flight; appends that arrive while a statement runs are written together by the next
 * one (one statement, one commit, messages of distinct sessions). Under load the Postgres cost per
 * message falls instead of every lane queueing behind its own round trip.
 */
class GroupAppender {
  private waiting: PendingAppend[] = [];
  private draining = false;

  append(message: AppendMessage): Promise<AppendOutcome> {
    return new Promise((resolve) => {
      this.waiting.push({ message, settle: resolve });
      if (!this.draining) {
        this.draining = true;
        // Appends of lanes woken in the same I/O phase join the first statement.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length) {
      const group = this.takeGroup();
      const messages = group.map((p) => p.message);
      const maxHistory = config().sessions.maxHistory;
      const outcomes = await appendMessages(messages, maxHistory).then(
        (all) => all.map((o) => Promise.resolve(o)),
        // One message's fault (say a repeated idempotency key) must not fail the others: one at a time.
        () => messages.map((m) => appendMessage(m, maxHistory)),
      );
      group.forEach((p, i) => p.settle(outcomes[i]!));
      await Promise.allSettled(outcomes);
    }
    this.draining = false;
  }

  /** The oldest waiting appends, one per session (a later one of a session waits for the next group). */
  private takeGroup(): PendingAppend[] {
    const sessions = new Set<string>();
    const group: PendingAppend[] = [];
    const rest: PendingAppend[] = [];
    for (const p of this.waiting) {
      if (group.length < maxGroup && !sessions.has(p.message.session_id)) {
        sessions.add(p.message.session_id);
        group.push(p);
      } else rest.push(p);
    }
    this.waiting = rest;
    return group;
  }
}

const appender = new GroupAppender();

async function persistMessage(job: MessageJob): Promise<BusEvent | undefined> {
  const { sequence: _seq, id: _id, ...envelope } = messageEnvelope(job, 0);
  const outcome = await appender.append({ ...job, envelope });
  if (outcome.kind === 'appended' || outcome.kind === 'already') return messageEnvelope(job, outcome.sequence);
  logger('sessions').warn({ session_id: job.session_id, message_id: job.message_id, outcome: outcome.kind }, 'message not persisted');
  return undefined;
}

/** Appends a non-message event at its session's next sequence, once; CONTEXT_UPDATE also merges into the context. */
const appendEventSql = (contextChange: string) => `with s as (
     update sessions set last_seq = last_seq + 1 ${contextChange}
      where session_id = $1 and not exists (select 1 from session_events where event_id = $2)
     returning last_seq
   )
   insert into session_events (event_id, session_id, interaction_id, event_type, payload, sequence)
   select $2, $1, $3, $4, $5::jsonb, s.last_seq from s
   returning sequence`;
const appendEvent = preparedStatement<{ sequence: number }>('sessions.append-event', appendEventSql(''));
const appendContextUpdate = preparedStatement<{ sequence: number }>(
  'sessions.append-context-update',
  appendEventSql(`, context = jsonb_set(jsonb_set(context,
       '{preferences}', coalesce(context->'preferences', '{}'::jsonb) || coalesce($5::jsonb->'data'->'preferences', '{}'::jsonb)),
       '{custom_data}', coalesce(context->'custom_data', '{}'::jsonb) || coalesce($5::jsonb->'data'->'custom_data', '{}'::jsonb))`),
);

async function persistEvent(job: EventJob): Promise<BusEvent | undefined> {
  const envelope = { event_type: job.event_type, session_id: job.session_id, channel: job.channel, data: job.data };
  const append = job.event_type === 'CONTEXT_UPDATE' ? appendContextUpdate : appendEvent;
  const rows = await append([job.session_id, job.event_id, job.interaction_id, auditTypeOf(job.event_type), JSON.stringify(envelope)]);
  let sequence = rows[0]?.sequence as number | undefined;
  if (sequence === undefined) {
    const existing = await db()('session_events').select('sequence').where({ event_id: job.event_id }).first();
    if (!existing) return undefined;
    sequence = existing.sequence as number;
  }
  return { ...envelope, id: job.event_id, sequence: Number(sequence) };
}

const inlineAttempts = 3;

/**
 * Persists then publishes one stream event. Transient failures are retried here first, so the lane
 * is held (and later events of the session wait) instead of letting a later event overtake this one.
 */
export async function deliver(job: DeliverJob): Promise<BusEvent | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      const event = job.kind === 'message' ? await persistMessage(job) : await persistEvent(job);
      if (event) await publishEvent(event);
      return event;
    } catch (err) {
      if (attempt >= inlineAttempts) throw err;
      await new Promise((r) => setTimeout(r, 25 * attempt));
    }
  }
}
