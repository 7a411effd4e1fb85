/**
 * Query module of `tool_confirmations`: a data-changing tool call the assistant asked for, waiting
 * for the person's yes. At most one is pending per session: asking again drops the earlier one.
 */
import { db } from '../db/index.js';

const TABLE = 'tool_confirmations';

export type ConfirmationStatus = 'pending' | 'confirmed' | 'declined' | 'dropped';

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

/** Whether any session of the user has a confirmation pending. */
export async function userHasPendingConfirmation(userId: string): Promise<boolean> {
  const row = await db()(`${TABLE} as c`).join('sessions as s', 's.session_id', 'c.session_id').where({ 's.user_id': userId, 'c.status': 'pending' }).first('c.confirmation_id');
  return !!row;
}

/** Answers a pending confirmation once: undefined when it was answered already (a concurrent turn took it). */
export async function answerConfirmation(confirmationId: string, status: Exclude<ConfirmationStatus, 'pending'>): Promise<Confirmation | undefined> {
  const [row] = await db()(TABLE).where({ confirmation_id: confirmationId, status: 'pending' }).update({ status, answered_at: db().fn.now() }).returning('*');
  return row as Confirmation | undefined;
}
