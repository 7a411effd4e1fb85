/**
 * Query module of `tool_confirmations`: a data-changing tool call the assistant asked for, waiting
 * for the person's yes. At most one is pending per session: asking again drops the earlier one. One
 * answered later than CONFIRMATION_TTL_SECONDS after it was asked is recorded as expired instead.
 */
import { db } from '../db/index.js';

const TABLE = 'tool_confirmations';

export type ConfirmationStatus = 'pending' | 'confirmed' | 'declined' | 'dropped' | 'expired';

export interface Confirmation {
  confirmation_id: string;
  session_id: string;
  tool_name: string;
  arguments: unknown;
  summary: string;
  status: ConfirmationStatus;
  turn_key: string | null;
  created_at: Date;
  answered_at: Date | null;
}

/** Records a pending confirmation, dropping any earlier one of the session (the latest question is the one asked). */
export async function requestConfirmation(sessionId: string, toolName: string, args: unknown, summary: string, turnKey: string | null): Promise<Confirmation> {
  return db().transaction(async (trx) => {
    await trx(TABLE).where({ session_id: sessionId, status: 'pending' }).update({ status: 'dropped', answered_at: trx.fn.now() });
    const [row] = await trx(TABLE).insert({ session_id: sessionId, tool_name: toolName, arguments: JSON.stringify(args ?? {}), summary, turn_key: turnKey }).returning('*');
    return row as Confirmation;
  });
}

/** The session's pending confirmation, if any. */
export async function pendingConfirmation(sessionId: string): Promise<Confirmation | undefined> {
  return db()<Confirmation>(TABLE).where({ session_id: sessionId, status: 'pending' }).orderBy('created_at', 'desc').first();
}

/** One confirmation with the user whose session it belongs to (the only person who may answer it). */
export async function getConfirmation(confirmationId: string): Promise<(Confirmation & { user_id: string }) | undefined> {
  return db()(`${TABLE} as c`).join('sessions as s', 's.session_id', 'c.session_id').where('c.confirmation_id', confirmationId).first('c.*', 's.user_id');
}

/** Whether any session of the user has a confirmation pending. */
export async function userHasPendingConfirmation(userId: string): Promise<boolean> {
  const row = await db()(`${TABLE} as c`).join('sessions as s', 's.session_id', 'c.session_id').where({ 's.user_id': userId, 'c.status': 'pending' }).first('c.confirmation_id');
  return !!row;
}

/**
 * Answers a pending confirmation once: as `status`, or as `expired` when it was asked more than
 * `ttlSeconds` ago (Postgres's clock, in the same statement, so no answer slips past the deadline).
 * Undefined when it was answered already (a concurrent turn took it).
 */
export async function answerConfirmation(confirmationId: string, status: Exclude<ConfirmationStatus, 'pending' | 'expired'>, ttlSeconds: number): Promise<Confirmation | undefined> {
  const k = db();
  const [row] = await k(TABLE)
    .where({ confirmation_id: confirmationId, status: 'pending' })
    .update({ status: k.raw(`case when created_at <= now() - make_interval(secs => ?) then 'expired' else ? end`, [ttlSeconds, status]), answered_at: k.fn.now() })
    .returning('*');
  return row as Confirmation | undefined;
}
