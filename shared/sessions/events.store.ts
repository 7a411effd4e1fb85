/**
 * Query module of `session_events`: the audit log (lowercase event types such as interaction_ended)
 * and, for rows with a sequence, the session's replayable event stream (payload = the envelope).
 * A stream event takes its sequence from `sessions.last_seq` in the same statement that writes it
 * (shared/stream/append-stream-event.sql.ts); a message's audit row is written by the message append
 * (shared/stream/append-messages.sql.ts), and expiry's by expire-sessions.sql.ts: one statement each.
 */
import type { Knex } from 'knex';
import { db } from '../db/index.js';

export const SESSION_EVENTS = 'session_events';

/** Audit event types written by the service (the spec leaves the full list open). */
export const auditTypes = {
  sessionCreated: 'session_created',
  sessionResumed: 'session_resumed',
  sessionExpired: 'session_expired',
  sessionClosed: 'session_closed',
  interactionStarted: 'interaction_started',
  interactionEnded: 'interaction_ended',
  historySynced: 'history_synced',
} as const;

/** Audit type of a broadcast event kind: MESSAGE → message_published, others lower-cased (channel_joined, typing…). */
export const auditTypeOf = (eventType: string) => (eventType === 'MESSAGE' ? 'message_published' : eventType.toLowerCase());

export interface AuditRecord {
  session_id: string;
  interaction_id?: string | null;
  event_type: string;
  payload?: Record<string, unknown>;
}

/** Writes audit rows (no stream position). */
export async function recordAudit(k: Knex, ...records: AuditRecord[]): Promise<void> {
  if (!records.length) return;
  await k(SESSION_EVENTS).insert(
    records.map((r) => ({ session_id: r.session_id, interaction_id: r.interaction_id ?? null, event_type: r.event_type, payload: JSON.stringify(r.payload ?? {}) })),
  );
}

export interface AuditRow {
  event_id: string;
  session_id: string;
  interaction_id: string | null;
  event_type: string;
  payload: Record<string, unknown>;
  sequence: number | null;
  timestamp: Date;
}

/** The audit log of a session, oldest first. */
export async function listAudit(sessionId: string, limit = 1000): Promise<AuditRow[]> {
  return db()<AuditRow>(SESSION_EVENTS)
    .select('event_id', 'session_id', 'interaction_id', 'event_type', 'payload', 'sequence', 'timestamp')
    .where({ session_id: sessionId })
    .orderBy([{ column: 'timestamp' }, { column: 'sequence' }])
    .limit(limit);
}

/** The sequence of a stream event already written, if any. */
export async function eventSequence(eventId: string, k: Knex = db()): Promise<number | undefined> {
  const existing = await k(SESSION_EVENTS).select('sequence').where({ event_id: eventId }).first();
  return existing ? (existing.sequence as number) : undefined;
}

/** The sequence of a published message by its message_published audit row (it outlives the trimmed history row). */
export async function publishedMessageSequence(sessionId: string, messageId: string, k: Knex = db()): Promise<number | undefined> {
  const audited = await k(SESSION_EVENTS)
    .select('sequence')
    .where({ session_id: sessionId, event_type: 'message_published' })
    .whereRaw(`payload->'data'->>'message_id' = ?`, [messageId])
    .first();
  return audited ? Number(audited.sequence) : undefined;
}

/** A page of a session's audit log, oldest first, with the total (one statement). */
export async function auditPage(sessionId: string, limit: number, offset: number): Promise<{ items: Array<Omit<AuditRow, 'timestamp'> & { timestamp: string }>; total: number }> {
  const rows = (await db()(SESSION_EVENTS)
    .select('event_id', 'session_id', 'interaction_id', 'event_type', 'payload', 'sequence', 'timestamp', db().raw('count(*) over ()::int as total'))
    .where({ session_id: sessionId })
    .orderBy([{ column: 'timestamp' }, { column: 'sequence' }, { column: 'event_id' }])
    .limit(limit)
    .offset(offset)) as Array<AuditRow & { total: number }>;
  const total = rows[0]?.total ?? (offset > 0 ? Number((await db()(SESSION_EVENTS).where({ session_id: sessionId }).count<{ n: string }[]>({ n: '*' }))[0]!.n) : 0);
  return { items: rows.map(({ total: _t, ...r }) => ({ ...r, timestamp: r.timestamp.toISOString() })), total };
}
