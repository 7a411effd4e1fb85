/**
 * Query module of `session_messages` (the conversation history as rows) together with the stream
 * position bookkeeping on `sessions`. Appending a message is one SQL statement: the session's
 * sequence and message count advance, last_activity and last_channel are refreshed, the message row
 * and its audit row are written, and rows beyond SERVICE_SESSION_MAX_HISTORY are trimmed.
 */
import type { Knex } from 'knex';
import { db, isUniqueViolation } from '../db/index.js';
import type { HistoryMessage } from './schemas.js';

export const SESSION_MESSAGES = 'session_messages';

export interface StoredMessage {
  message_id: string;
  session_id: string;
  interaction_id: string | null;
  sequence: number;
  channel: string;
  role: string;
  content: string;
  metadata: Record<string, unknown>;
  created_at: Date;
}

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
  | { kind: 'duplicate-key' }
  | { kind: 'no-session' };

/** Appends a message once (a retry of the same message_id appends nothing and reports the first sequence). */
export async function appendMessage(m: AppendMessage, maxHistory: number, k: Knex = db()): Promise<AppendOutcome> {
  try {
    const { rows } = await k.raw(
      `with s as (
         update sessions
            set last_seq = last_seq + 1, message_count = message_count + 1, last_activity = now(),
                context = jsonb_set(context, '{last_channel}', to_jsonb(?::text))
          where session_id = ? and not exists (select 1 from session_messages where message_id = ?)
         returning last_seq, message_count
       ), m as (
         insert into session_messages (message_id, session_id, interaction_id, sequence, position, channel, role, content, metadata, idempotency_key)
         select ?, ?, ?, s.last_seq, s.message_count, ?, ?, ?, ?::jsonb, ? from s
       ), e as (
         insert into session_events (session_id, interaction_id, event_type, payload, sequence)
         select ?, ?, 'message_published', jsonb_set(?::jsonb, '{data,sequence}', to_jsonb(s.last_seq)), s.last_seq from s
       ), trimmed as (
         delete from session_messages where session_id = ? and position <= (select message_count from s) - ?
       )
       select last_seq as sequence from s`,
      [
        m.channel, m.session_id, m.message_id,
        m.message_id, m.session_id, m.interaction_id, m.channel, m.role, m.content, JSON.stringify(m.metadata), m.idempotency_key,
        m.session_id, m.interaction_id, JSON.stringify(m.envelope),
        m.session_id, maxHistory,
      ],
    );
    if (rows.length) return { kind: 'appended', sequence: Number(rows[0].sequence) };
  } catch (err) {
    if (isUniqueViolation(err, 'session_messages_session_id_idempotency_key_unique')) return { kind: 'duplicate-key' };
    throw err;
  }
  const existing = await k(SESSION_MESSAGES).select('sequence').where({ message_id: m.message_id }).first();
  if (existing) return { kind: 'already', sequence: Number(existing.sequence) };
  // Persisted earlier but already trimmed out of the history: its audit row still holds the sequence.
  const audited = await k('session_events').select('sequence').where({ session_id: m.session_id, event_type: 'message_published' }).whereRaw(`payload->'data'->>'message_id' = ?`, [m.message_id]).first();
  if (audited) return { kind: 'already', sequence: Number(audited.sequence) };
  return { kind: 'no-session' };
}

/** The last `limit` messages of a session, oldest first. */
export async function lastMessages(sessionId: string, limit: number, k: Knex = db()): Promise<StoredMessage[]> {
  const rows = await k(SESSION_MESSAGES)
    .select('message_id', 'session_id', 'interaction_id', 'sequence', 'channel', 'role', 'content', 'metadata', 'created_at')
    .where({ session_id: sessionId })
    .orderBy('position', 'desc')
    .limit(limit);
  return rows.reverse().map((r: StoredMessage) => ({ ...r, sequence: Number(r.sequence) }));
}

/** A message of a session by its idempotency key, if it is still in the history. */
export async function messageByIdempotencyKey(sessionId: string, key: string): Promise<{ message_id: string; sequence: number } | undefined> {
  const row = await db()(SESSION_MESSAGES).select('message_id', 'sequence').where({ session_id: sessionId, idempotency_key: key }).first();
  return row && { message_id: row.message_id, sequence: Number(row.sequence) };
}

/** A persisted message's sequence (history or audit log), if any. */
export async function persistedSequence(sessionId: string, messageId: string): Promise<number | undefined> {
  const row = await db()(SESSION_MESSAGES).select('sequence').where({ message_id: messageId }).first();
  if (row) return Number(row.sequence);
  const audited = await db()('session_events').select('sequence').where({ session_id: sessionId, event_type: 'message_published' }).whereRaw(`payload->'data'->>'message_id' = ?`, [messageId]).first();
  return audited ? Number(audited.sequence) : undefined;
}

/** History entries as the context shows them. */
export const toHistory = (m: StoredMessage): HistoryMessage => ({ role: m.role as HistoryMessage['role'], content: m.content, channel: m.channel });
