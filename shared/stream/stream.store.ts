/**
 * The stream's queries over the session aggregate: appending to a session's stream (through its
 * operation files, append-messages.sql.ts and append-stream-event.sql.ts, which advance the session's
 * position and write the audit rows in one statement each), where a stream stands, whether a session
 * takes events, and the replay a reconnecting stream reads. Nothing here writes a table directly.
 */
import type { Knex } from 'knex';
import { db, preparedStatement } from '../db/index.js';
import type { BusEvent } from '../bus.js';
import { auditTypeOf, publishedMessageSequence, SESSION_EVENTS } from '../sessions/events.store.js';
import { storedMessageSequence } from '../sessions/messages.store.js';
import { SESSIONS } from '../sessions/sessions.store.js';
import { appendMessagesStatement } from './append-messages.sql.js';
import { appendContextUpdate, appendEvent } from './append-stream-event.sql.js';

// --- appending ---------------------------------------------------------------------------------

export interface AppendMessage {
  message_id: string;
  session_id: string;
  interaction_id: string | null;
  channel: string;
  role: string;
  content: string;
  metadata: Record<string, unknown>;
  idempotency_key: string | null;
  /** The broadcast envelope (its data gets the sequence); stored as the audit row's payload. */
  envelope: Record<string, unknown>;
}

export type AppendOutcome =
  | { kind: 'appended'; sequence: number }
  | { kind: 'already'; sequence: number }
  /** The session is closed or gone: nothing was written (it closed between acceptance and the write). */
  | { kind: 'no-session' };

/**
 * Appends a batch of messages in one statement and one commit, each at most once (a retry of a
 * message_id appends nothing and reports the first sequence); a closed or unknown session takes
 * none. Messages of one session take its next sequences in batch order. Used by the stream
 * writer (persist.ts); a unique violation of an idempotency key fails the whole statement, so the
 * caller retries such a batch one message at a time (idempotency.ts). The history is trimmed to
 * `maxHistory` by the rows that existed before the statement: a session given more than
 * `maxHistory` messages at once is trimmed by its next append.
 */
export async function appendMessages(batch: readonly AppendMessage[], maxHistory: number, k: Knex = db()): Promise<AppendOutcome[]> {
  const rows = await appendMessagesStatement([JSON.stringify(batch.map((m, idx) => ({ ...m, idx }))), maxHistory], k);
  const appended = new Map<string, number>(rows.map((r) => [r.message_id, Number(r.sequence)]));
  return Promise.all(
    batch.map(async (m): Promise<AppendOutcome> => {
      const sequence = appended.get(m.message_id);
      if (sequence !== undefined) return { kind: 'appended', sequence };
      const earlier = await persistedSequence(m.session_id, m.message_id, k);
      return earlier !== undefined ? { kind: 'already', sequence: earlier } : { kind: 'no-session' };
    }),
  );
}

/** A persisted message's sequence: from the history, or (trimmed out of it) from its audit row, which outlives it. */
export async function persistedSequence(sessionId: string, messageId: string, k: Knex = db()): Promise<number | undefined> {
  return (await storedMessageSequence(messageId, k)) ?? publishedMessageSequence(sessionId, messageId, k);
}

export interface StreamEventRecord {
  event_id: string;
  session_id: string;
  interaction_id: string | null;
  /** The broadcast kind (CONTEXT_UPDATE, TYPING, …); stored as its audit type. */
  event_type: string;
  /** The envelope without id and sequence. */
  envelope: Record<string, unknown>;
}

/**
 * Appends a stream event at its session's next sequence (a CONTEXT_UPDATE also merges its data into
 * the context). Returns the sequence, or undefined when nothing was written: the event was written
 * before (see eventSequence) or the session is gone.
 */
export async function appendStreamEvent(e: StreamEventRecord, k: Knex = db()): Promise<number | undefined> {
  const append = e.event_type === 'CONTEXT_UPDATE' ? appendContextUpdate : appendEvent;
  const rows = await append([e.session_id, e.event_id, e.interaction_id, auditTypeOf(e.event_type), JSON.stringify(e.envelope)], k);
  return rows[0]?.sequence as number | undefined;
}

// --- where a stream stands ---------------------------------------------------------------------

const publishableRow = preparedStatement<{ status: string; interaction_ids: string[] }>(
  'stream.publishable',
  `select s.status, coalesce(array_agg(i.interaction_id) filter (where i.interaction_id is not null), '{}') as interaction_ids
     from sessions s left join session_interactions i on i.session_id = s.session_id
    where s.session_id = $1
    group by s.session_id`,
);

/**
 * A session's status and the ids of its interactions (which never move to another session), in one
 * round trip, for the publish check and its cache; undefined for an unknown session.
 */
export async function publishableState(sessionId: string): Promise<{ status: string; interaction_ids: string[] } | undefined> {
  const [row] = await publishableRow([sessionId]);
  return row;
}

/** The last sequence of a session's stream (0 before any event, or for an unknown session). */
export async function streamHead(sessionId: string): Promise<number> {
  const row = await db()(SESSIONS).select('last_seq').where({ session_id: sessionId }).first();
  return Number(row?.last_seq ?? 0);
}

/**
 * Where each session of a user stands (last stream position, last channel), its rows locked for the
 * rest of the transaction: user erasure reads them before they go, and no append can slip in between.
 */
export async function sessionHeadsOfUser(trx: Knex.Transaction, userId: string): Promise<Array<{ session_id: string; last_seq: number; last_channel: string | null }>> {
  const rows = (await trx(SESSIONS)
    .select('session_id', 'last_seq', trx.raw(`context->>'last_channel' as last_channel`))
    .where({ user_id: userId })
    .forUpdate()) as Array<{ session_id: string; last_seq: string | number | null; last_channel: string | null }>;
  return rows.map((r) => ({ session_id: r.session_id, last_seq: Number(r.last_seq ?? 0), last_channel: r.last_channel }));
}

// --- replay ------------------------------------------------------------------------------------

/** Stream events of a session after a sequence, in order (replay of a reconnecting SSE client). */
export async function streamEventsAfter(sessionId: string, afterSequence: number, limit: number): Promise<BusEvent[]> {
  const rows = await db()(SESSION_EVENTS)
    .select('event_id', 'sequence', 'payload')
    .where({ session_id: sessionId })
    .where('sequence', '>', afterSequence)
    .orderBy('sequence')
    .limit(limit);
  return rows.map((r: { event_id: string; sequence: number; payload: Omit<BusEvent, 'sequence' | 'id'> }) => ({
    ...r.payload,
    id: r.payload.event_type === 'MESSAGE' ? String(r.payload.data.message_id) : r.event_id,
    sequence: Number(r.sequence),
  }));
}
