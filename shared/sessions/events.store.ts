/**
 * Query module of `session_events`: the audit log (lowercase event types such as interaction_ended)
 * and, for rows with a sequence, the session's replayable event stream (payload = the envelope).
 */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import type { BusEvent } from '../bus.js';

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

/** The last sequence of a session's stream (0 when empty or unknown): where a live-only stream starts. */
export async function streamHead(sessionId: string): Promise<number> {
  const row = await db()('sessions').select('last_seq').where({ session_id: sessionId }).first();
  return Number(row?.last_seq ?? 0);
}
