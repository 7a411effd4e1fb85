/**
 * Finding or creating a user's session (spec 000 "States and transitions"): a live session inside
 * its resume window is resumed; one past it is closed and replaced; none → a new active session.
 * The user's row is locked for the decision, so concurrent resolves for one user serialise and never
 * create two live sessions (the partial unique index would refuse a second one anyway).
 */
import type { Knex } from 'knex';
import { config } from '../config.js';
import { db } from '../db/index.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { auditTypes, recordAudit } from './events.store.js';
import {
  activateSession, closeSessionRow, closedSessionConflict, getSession, insertSession, lockLiveSession, lockSession, type Session,
  endActiveInteractions, type EndedInteraction,
} from './sessions.store.js';
import { closeExpiredSessions } from './expire-sessions.sql.js';
import { announceLeft, endedAudit } from './interactions.js';
import { lockUser } from '../users/users.store.js';
import { forgetPublishable, publishSessionClosed } from '../stream/index.js';
import { channelSchema, type Channel } from './sessions.schemas.js';
import { queueSummaries } from './summary.js';

export interface Resolution {
  session: Session;
  resumed: boolean;
}

/** Checks an interval with Postgres itself (the authority on its syntax); a bad one is a 400 naming `field`. */
export async function assertInterval(k: Knex, interval: string, field = 'body.resume_window'): Promise<void> {
  try {
    await k.raw('select ?::interval', [interval]);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === '22007' || code === '22P02' || code === '22008' || code === '22015') {
      throw new ValidationError(`"${interval}" is not an interval.`, [{ path: field, message: 'must be an interval such as "30 minutes", "24 hours" or "7 days"' }]);
    }
    throw err;
  }
}

/** Finds or creates the live session of a user; `resumeWindow` overrides the session's window for this call. */
export async function resolveSession(userId: string, resumeWindow?: string): Promise<Resolution> {
  if (resumeWindow !== undefined) await assertInterval(db(), resumeWindow);
  const window = resumeWindow ?? config().sessions.resumeWindow;
  const { sessionId, resumed, ended, replaced } = await db().transaction<{ sessionId: string; resumed: boolean; ended: EndedInteraction[]; replaced?: string }>(async (trx) => {
    if (!(await lockUser(trx, userId))) throw new NotFoundError(`No user ${userId}.`);
    const live = await lockLiveSession(trx, userId, resumeWindow ?? null);
    if (live?.inside) {
      if (live.status !== 'active') await activateSession(trx, live.session_id);
      await recordAudit(trx, { session_id: live.session_id, event_type: auditTypes.sessionResumed, payload: { previous_status: live.status, resume_window: window } });
      return { sessionId: live.session_id, resumed: true, ended: [] };
    }
    const ended = live ? (await endActiveInteractions(trx, live.session_id)).map((i) => ({ ...i, session_id: live.session_id })) : [];
    if (live) {
      await closeSessionRow(trx, live.session_id);
      await recordAudit(
        trx,
        ...endedAudit(ended, 'session_expired'),
        { session_id: live.session_id, event_type: auditTypes.sessionExpired, payload: { reason: 'resume_window_exceeded', resume_window: window } },
      );
    }
    const created = await insertSession(trx, userId, window);
    await recordAudit(trx, {
      session_id: created,
      event_type: auditTypes.sessionCreated,
      payload: { resume_window: window, ...(live ? { replaces_session_id: live.session_id } : {}) },
    });
    return { sessionId: created, resumed: false, ended, replaced: live?.session_id };
  });
  if (replaced) await forgetPublishable([replaced]);
  // The replaced session's interactions end like any other: their channels see CHANNEL_LEFT.
  await announceLeft(ended);
  if (replaced) await queueSummaries([replaced]);
  return { session: await getSession(sessionId), resumed };
}

/**
 * Closes every live session whose last activity is at or before now minus its resume window (the
 * spec's expiry rule), writing a session_expired audit row for each. Returns the ids closed.
 */
export async function expireSessions(): Promise<string[]> {
  const { sessionIds, ended } = await closeExpiredSessions(auditTypes.sessionExpired, auditTypes.interactionEnded);
  await announceLeft(ended);
  for (const sessionId of sessionIds) await publishSessionClosed(sessionId, await lastChannel(sessionId), 'expired');
  return sessionIds;
}

/** The channel a session was last used on (context.last_channel), `chat` when none. */
async function lastChannel(sessionId: string): Promise<Channel> {
  const parsed = channelSchema.safeParse(((await getSession(sessionId)).context as { last_channel?: unknown }).last_channel);
  return parsed.success ? parsed.data : 'chat';
}

/**
 * Explicitly closes a live session (active, idle or resumable → closed; 404 unknown, 409 already
 * closed): closed_at is set, its active interactions end, and a session_closed audit row is written.
 */
export async function closeSession(sessionId: string, reason?: string): Promise<Session> {
  const ended = await db().transaction(async (trx) => {
    const session = await lockSession(trx, sessionId);
    if (session.status === 'closed') throw closedSessionConflict(sessionId);
    const ended = await endActiveInteractions(trx, sessionId);
    await closeSessionRow(trx, sessionId);
    await recordAudit(
      trx,
      ...ended.map((i) => ({
        session_id: sessionId,
        interaction_id: i.interaction_id,
        event_type: auditTypes.interactionEnded,
        payload: { channel: i.channel, reason: 'session_closed' },
      })),
      { session_id: sessionId, event_type: auditTypes.sessionClosed, payload: { previous_status: session.status, reason: reason ?? null } },
    );
    return ended.map((i) => ({ ...i, session_id: sessionId }));
  });
  await announceLeft(ended);
  await publishSessionClosed(sessionId, await lastChannel(sessionId), reason ?? 'closed');
  await queueSummaries([sessionId]);
  return getSession(sessionId);
}
