/** Query module of `sessions`. */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import { ConflictError, NotFoundError } from '../errors.js';
import type { SessionStatus } from './schemas.js';

export const SESSIONS = 'sessions';
const COLUMNS = ['session_id', 'user_id', 'status', 'context', 'resume_window', 'created_at', 'last_activity', 'closed_at', 'updated_at'] as const;

interface SessionRow {
  session_id: string;
  user_id: string;
  status: SessionStatus;
  context: Record<string, unknown>;
  resume_window: string;
  created_at: Date;
  last_activity: Date;
  closed_at: Date | null;
  updated_at: Date;
}
export type Session = SessionRow;

/** Select list of a session (resume_window as Postgres' interval text). */
export const sessionSelect = (k: Knex) => [
  ...COLUMNS.filter((c) => c !== 'resume_window').map((c) => `sessions.${c}`),
  k.raw(`sessions.resume_window::text as resume_window`),
];

const unitNames: Record<string, string> = { year: 'year', years: 'year', mon: 'month', mons: 'month', day: 'day', days: 'day' };

/** Renders Postgres' interval text ("1 day 02:30:00", "24:00:00") in the unit syntax clients send ("1 day 2 hours 30 minutes", "24 hours"). */
export function compactInterval(text: string): string {
  const parts: string[] = [];
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  for (const [, n, unit] of text.matchAll(/(-?\d+) (years?|mons?|days?)/g)) parts.push(plural(Number(n), unitNames[unit!]!));
  const clock = /(\d+):(\d+):(\d+(?:\.\d+)?)/.exec(text);
  if (clock) {
    const [h, m, s] = [Number(clock[1]), Number(clock[2]), Number(clock[3])];
    if (h) parts.push(plural(h, 'hour'));
    if (m) parts.push(plural(m, 'minute'));
    if (s) parts.push(plural(s, 'second'));
  }
  return parts.join(' ') || '0 seconds';
}

function toDomain(row: SessionRow): Session {
  return { ...row, resume_window: compactInterval(row.resume_window) };
}

/** The session, or NotFoundError. */
export async function getSession(sessionId: string, k: Knex = db()): Promise<Session> {
  const row = (await k(SESSIONS).select(sessionSelect(k)).where({ session_id: sessionId }).first()) as SessionRow | undefined;
  if (!row) throw new NotFoundError(`No session ${sessionId}.`);
  return toDomain(row);
}

/** A user's sessions, newest first. */
export async function listSessions(userId: string, limit: number): Promise<Session[]> {
  const k = db();
  const rows = (await k(SESSIONS).select(sessionSelect(k)).where({ user_id: userId }).orderBy('created_at', 'desc').limit(limit)) as SessionRow[];
  return rows.map(toDomain);
}

/** Locks a session row for the rest of the transaction; NotFoundError if unknown. */
export async function lockSession(trx: Knex.Transaction, sessionId: string): Promise<Session> {
  const row = (await trx(SESSIONS).select(sessionSelect(trx)).where({ session_id: sessionId }).forUpdate().first()) as SessionRow | undefined;
  if (!row) throw new NotFoundError(`No session ${sessionId}.`);
  return toDomain(row);
}

/** The ConflictError of a move a closed session refuses. */
export function closedSessionConflict(sessionId: string): ConflictError {
  return new ConflictError(`Session ${sessionId} is closed.`, [], { status: 'closed', allowed_next_states: [] });
}

/** Sets a session's status (closing sets closed_at). */
export async function setSessionStatus(trx: Knex, sessionId: string, status: SessionStatus): Promise<void> {
  await trx(SESSIONS)
    .where({ session_id: sessionId })
    .update({ status, closed_at: status === 'closed' ? trx.fn.now() : null });
}
