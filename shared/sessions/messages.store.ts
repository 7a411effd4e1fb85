/**
 * Query module of `session_messages` (the conversation history as rows). Messages are written only
 * by the stream's append statement (shared/stream/append-messages.sql.ts), which also advances the
 * session's stream position and writes each message's audit row. The unique index on
 * (session_id, idempotency_key) is handled in shared/stream/idempotency.ts.
 */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import type { HistoryMessage } from './sessions.schemas.js';

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

/** A message's sequence while it is in the history. */
export async function storedMessageSequence(messageId: string, k: Knex = db()): Promise<number | undefined> {
  const row = await k(SESSION_MESSAGES).select('sequence').where({ message_id: messageId }).first();
  return row ? Number(row.sequence) : undefined;
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

/** Role and content of the messages of an interaction still in the history, in stream order. */
export async function interactionMessages(interactionId: string, k: Knex = db()): Promise<Array<{ role: string; content: string }>> {
  return k(SESSION_MESSAGES).select('role', 'content').where({ interaction_id: interactionId }).orderBy('sequence');
}

/** History entries as the context shows them. */
export const toHistory = (m: StoredMessage): HistoryMessage => ({ role: m.role as HistoryMessage['role'], content: m.content, channel: m.channel });
