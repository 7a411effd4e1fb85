/**
 * Query module of `session_messages` (the conversation history as rows). Messages are written only
 * by the append statement (append-messages.sql.ts), which also advances the session's stream
 * position and writes each message's audit row. The unique index on (session_id, idempotency_key)
 * is handled in idempotency.ts.
 */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import { appendMessagesStatement } from './append-messages.sql.js';
import { publishedMessageSequence } from './events.store.js';
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
  /** The session is closed or gone: nothing was written (it closed between acceptance and the write). */
  | { kind: 'no-session' };

/**
 * Appends a batch of messages in one statement and one commit, each at most once (a retry of a
 * message_id appends nothing and reports the first sequence); a closed or unknown session takes
 * none. Messages of one session take its next sequences in batch order. Used by the stream
 * writer (shared/stream/persist.ts); a unique violation of an idempotency key fails the whole
 * statement, so the caller retries such a batch one message at a time (shared/stream/idempotency.ts). The
 * history is trimmed to `maxHistory` by the rows that existed before the statement: a session
 * given more than `maxHistory` messages at once is trimmed by its next append.
 */
export async function appendMessages(batch: readonly AppendMessage[], maxHistory: number, k: Knex = db()): Promise<AppendOutcome[]> {
  const rows = await appendMessagesStatement([JSON.stringify(batch.map((m, idx) => ({ ...m, idx }))), maxHistory], k);
  const appended = new Map<string, number>(rows.map((r) => [r.message_id, Number(r.sequence)]));
  return Promise.all(
    batch.map(async (m): Promise<AppendOutcome> => {
      const sequence = appended.get(m.message_id);
      return sequence !== undefined ? { kind: 'appended', sequence } : earlierOutcome(m, k);
    }),
  );
}

/** Why a message was not appended: persisted before (with its sequence), or its session is closed or gone. */
async function earlierOutcome(m: AppendMessage, k: Knex): Promise<AppendOutcome> {
  const existing = await k(SESSION_MESSAGES).select('sequence').where({ message_id: m.message_id }).first();
  if (existing) return { kind: 'already', sequence: Number(existing.sequence) };
  // Persisted earlier but already trimmed out of the history: its audit row still holds the sequence.
  const audited = await publishedMessageSequence(m.session_id, m.message_id, k);
  if (audited !== undefined) return { kind: 'already', sequence: audited };
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
  return publishedMessageSequence(sessionId, messageId);
}

/** Role and content of the messages of an interaction still in the history, in stream order. */
export async function interactionMessages(interactionId: string, k: Knex = db()): Promise<Array<{ role: string; content: string }>> {
  return k(SESSION_MESSAGES).select('role', 'content').where({ interaction_id: interactionId }).orderBy('sequence');
}

/** History entries as the context shows them. */
export const toHistory = (m: StoredMessage): HistoryMessage => ({ role: m.role as HistoryMessage['role'], content: m.content, channel: m.channel });
