/**
 * The session aggregate's store: `sessions` and their channel interactions (`session_interactions`).
 * The stream position columns (last_seq, message_count, last_activity, context.last_channel)
 * advance in the statements that append to the stream, and are read for it, in shared/stream/
 * (stream.store.ts); expiry closes sessions and their interactions with its audit rows in
 * expire-sessions.sql.ts.
 */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import { compactInterval } from './interval.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { liveStatuses, type Channel, type Interaction, type sessionSchema, type SessionStatus } from './sessions.schemas.js';
import type { z } from '../zod.js';

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
/** A session: the Session the API lists, with its context and updated_at. */
export type Session = z.output<typeof sessionSchema> & { context: Record<string, unknown>; updated_at: string };

/** Select list of a session (resume_window as Postgres' interval text). */
export const sessionSelect = (k: Knex) => [
  ...COLUMNS.filter((c) => c !== 'resume_window').map((c) => `sessions.${c}`),
  k.raw(`sessions.resume_window::text as resume_window`),
];

function toDomain(row: SessionRow): Session {
  return {
    ...row,
    resume_window: compactInterval(row.resume_window),
    created_at: row.created_at.toISOString(),
    last_activity: row.last_activity.toISOString(),
    closed_at: row.closed_at?.toISOString() ?? null,
    updated_at: row.updated_at.toISOString(),
  };
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

/** A session as a history row: where it started, how many messages it has, and its summary. */
export interface SessionHistoryRow {
  channel: string | null;
  message_count: number;
  summary: string | null;
}

/**
 * History columns of sessions by id: the channel of the first interaction (the one the conversation
 * started on), the message count and the summary (written when the session goes idle or closes).
 */
export async function sessionHistoryRows(sessionIds: string[]): Promise<Map<string, SessionHistoryRow>> {
  if (!sessionIds.length) return new Map();
  const rows = (await db()(`${SESSIONS} as s`)
    .select(
      's.session_id',
      's.summary',
      db().raw('s.message_count::int as message_count'),
      db().raw('(select i.channel from session_interactions i where i.session_id = s.session_id order by i.started_at, i.interaction_id limit 1) as channel'),
    )
    .whereIn('s.session_id', sessionIds)) as Array<SessionHistoryRow & { session_id: string }>;
  return new Map(rows.map(({ session_id, ...r }) => [session_id, r]));
}

/** Locks a session row for the rest of the transaction; NotFoundError if unknown. */
export async function lockSession(trx: Knex.Transaction, sessionId: string): Promise<Session> {
  const row = (await trx(SESSIONS).select(sessionSelect(trx)).where({ session_id: sessionId }).forUpdate().first()) as SessionRow | undefined;
  if (!row) throw new NotFoundError(`No session ${sessionId}.`);
  return toDomain(row);
}

/** The ConflictError of a move a closed session refuses. */
export function closedSessionConflict(sessionId: string): ConflictError {
  return new ConflictError(`Session ${sessionId} is closed.`, [], { current_status: 'closed', allowed_next_states: [] });
}

/** Makes a session active (a resumed session, or one an interaction joined). */
export async function activateSession(k: Knex, sessionId: string): Promise<void> {
  await k(SESSIONS).where({ session_id: sessionId }).update({ status: 'active' });
}

/** A session an interaction joins: active, and its last activity is now (the sweep must not close it mid-call). */
export async function joinSession(k: Knex, sessionId: string): Promise<void> {
  await k(SESSIONS).where({ session_id: sessionId }).update({ status: 'active', last_activity: k.fn.now() });
}

/** Whether a session's last activity is at or before now minus its resume window (the expiry rule), whatever its status. */
export async function isPastResumeWindow(k: Knex, sessionId: string): Promise<boolean> {
  const row = await k(SESSIONS).select(k.raw('last_activity <= now() - resume_window as expired')).where({ session_id: sessionId }).first();
  return !!row?.expired;
}

/**
 * The summary a session gets when it goes idle or closes, unless it has one: its first user message
 * cut to 140 characters (the sessions.summarize job replaces it with the model's when one is configured).
 */
export const fallbackSummary = (alias: string) =>
  `coalesce(${alias}.summary, (select case when length(m.content) > 140 then left(m.content, 139) || '…' else m.content end
     from session_messages m where m.session_id = ${alias}.session_id and m.role = 'user' order by m.position limit 1))`;

/** Makes a session idle (its last active interaction ended). */
export async function idleSession(k: Knex, sessionId: string): Promise<void> {
  await k(`${SESSIONS} as s`).where({ session_id: sessionId }).update({ status: 'idle', summary: k.raw(fallbackSummary('s')) });
}

/** Closes a session (closed_at now). */
export async function closeSessionRow(k: Knex, sessionId: string): Promise<void> {
  await k(`${SESSIONS} as s`).where({ session_id: sessionId }).update({ status: 'closed', closed_at: k.fn.now(), summary: k.raw(fallbackSummary('s')) });
}

/** Sets a session's summary (the model's). */
export async function setSessionSummary(sessionId: string, summary: string): Promise<void> {
  await db()(SESSIONS).where({ session_id: sessionId }).update({ summary });
}

/**
 * Locks the live session of a user, if any, with whether its last activity is inside the resume
 * window (`resumeWindow` overrides the session's own for this check).
 */
export async function lockLiveSession(
  trx: Knex.Transaction,
  userId: string,
  resumeWindow: string | null,
): Promise<{ session_id: string; status: SessionStatus; inside: boolean } | undefined> {
  return trx(SESSIONS)
    .select('session_id', 'status', trx.raw('last_activity > now() - coalesce(?::interval, resume_window) as inside', [resumeWindow]))
    .where({ user_id: userId })
    .whereIn('status', liveStatuses)
    .forUpdate()
    .first();
}

/** Creates an active session with an empty context; returns its id. */
export async function insertSession(k: Knex, userId: string, resumeWindow: string): Promise<string> {
  const [created] = await k(SESSIONS)
    .insert({ user_id: userId, status: 'active', resume_window: resumeWindow, context: JSON.stringify({ preferences: {}, custom_data: {} }) })
    .returning('session_id');
  return created.session_id as string;
}

/** An interaction ended because its session closed. */
export interface EndedInteraction {
  session_id: string;
  interaction_id: string;
  channel: string;
}

/** A user's part of an erasure: their sessions, with the interactions, messages and events that go with them (counted first). */
export async function eraseUserSessions(trx: Knex.Transaction, user: { user_id: string }): Promise<Record<string, number>> {
  const { rows } = await trx.raw(
    `select
       (select count(*) from session_interactions i join sessions s using (session_id) where s.user_id = :id)::int as session_interactions,
       (select count(*) from session_messages m join sessions s using (session_id) where s.user_id = :id)::int as session_messages,
       (select count(*) from session_events e join sessions s using (session_id) where s.user_id = :id)::int as session_events`,
    { id: user.user_id },
  );
  const sessions = await trx(SESSIONS).where({ user_id: user.user_id }).delete();
  return { sessions, ...rows[0] };
}

// Interactions: a session's presence on a channel.

export const INTERACTIONS = 'session_interactions';
const INTERACTION_COLUMNS: string[] = ['interaction_id', 'session_id', 'channel', 'channel_ref', 'status', 'started_at', 'ended_at', 'legacy_interaction_id', 'metadata'];

interface InteractionRow extends Omit<Interaction, 'started_at' | 'ended_at'> {
  started_at: Date;
  ended_at: Date | null;
}

const interactionToDomain = (row: InteractionRow): Interaction => ({
  ...row,
  started_at: row.started_at.toISOString(),
  ended_at: row.ended_at?.toISOString() ?? null,
});

export interface NewInteraction {
  channel: Channel;
  channel_ref?: string | null;
  metadata?: Record<string, unknown>;
  legacy_interaction_id?: string | null;
}

/** The interaction, or NotFoundError. */
export async function getInteraction(interactionId: string): Promise<Interaction> {
  const row = (await db()(INTERACTIONS).select(INTERACTION_COLUMNS).where({ interaction_id: interactionId }).first()) as InteractionRow | undefined;
  if (!row) throw new NotFoundError(`No interaction ${interactionId}.`);
  return interactionToDomain(row);
}

/** Interactions of a session, oldest first. */
export async function listInteractions(sessionId: string): Promise<Interaction[]> {
  return ((await db()(INTERACTIONS).select(INTERACTION_COLUMNS).where({ session_id: sessionId }).orderBy('started_at')) as InteractionRow[]).map(interactionToDomain);
}

/** Records an active interaction on a session. */
export async function insertInteraction(k: Knex, sessionId: string, input: NewInteraction): Promise<Interaction> {
  const [row] = await k(INTERACTIONS)
    .insert({
      session_id: sessionId,
      channel: input.channel,
      channel_ref: input.channel_ref ?? null,
      metadata: JSON.stringify(input.metadata ?? {}),
      legacy_interaction_id: input.legacy_interaction_id ?? null,
    })
    .returning(INTERACTION_COLUMNS);
  return interactionToDomain(row as InteractionRow);
}

/** The session of an interaction, or undefined for an unknown interaction. */
export async function interactionSessionId(k: Knex, interactionId: string): Promise<string | undefined> {
  const found = await k(INTERACTIONS).select('session_id').where({ interaction_id: interactionId }).first();
  return found?.session_id as string | undefined;
}

/** Locks an interaction row for the rest of the transaction. */
export async function lockInteraction(trx: Knex.Transaction, interactionId: string): Promise<Interaction> {
  return interactionToDomain((await trx(INTERACTIONS).select(INTERACTION_COLUMNS).where({ interaction_id: interactionId }).forUpdate().first()) as InteractionRow);
}

/** Ends an interaction (closed, ended_at now). */
export async function endInteraction(k: Knex, interactionId: string): Promise<Interaction> {
  const [row] = await k(INTERACTIONS).where({ interaction_id: interactionId }).update({ status: 'closed', ended_at: k.fn.now() }).returning(INTERACTION_COLUMNS);
  return interactionToDomain(row as InteractionRow);
}

/** Ends every active interaction of a session; returns those ended. */
export async function endActiveInteractions(k: Knex, sessionId: string): Promise<Array<{ interaction_id: string; channel: string }>> {
  return k(INTERACTIONS)
    .where({ session_id: sessionId, status: 'active' })
    .update({ status: 'closed', ended_at: k.fn.now() })
    .returning(['interaction_id', 'channel']);
}

/** How many interactions of a session are active. */
export async function countActiveInteractions(k: Knex, sessionId: string): Promise<number> {
  const stillActive = await k(INTERACTIONS).where({ session_id: sessionId, status: 'active' }).count<{ count: number }[]>('* as count');
  return Number(stillActive[0]!.count);
}

/**
 * Active interactions whose channel has ended them: a chatapp interaction once the user's 24-hour
 * customer window has closed (no open window for the user), a web-chat (`chat`) interaction after
 * `chatIdleSeconds` without a message (or since it started). At most `limit`, oldest first.
 */
export async function timedOutInteractions(chatIdleSeconds: number, limit = 500, k: Knex = db()): Promise<Array<{ interaction_id: string; channel: string }>> {
  const { rows } = await k.raw(
    `select i.interaction_id, i.channel
       from session_interactions i join sessions s on s.session_id = i.session_id
      where i.status = 'active' and (
        (i.channel = 'chatapp' and not exists (select 1 from chatapp_sessions c where c.user_id = s.user_id and c.window_expires_at > now()))
        or (i.channel = 'chat' and greatest(i.started_at, (select max(m.created_at) from session_messages m
                                                           where m.session_id = i.session_id and m.interaction_id = i.interaction_id))
                                    <= now() - make_interval(secs => ?)))
      order by i.started_at
      limit ?`,
    [chatIdleSeconds, limit],
  );
  return rows;
}
