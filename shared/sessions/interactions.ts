/**
 * Channel interactions on a session (the moves; their SQL is in sessions.store.ts):
 * several may be active at once; closing the last active one makes the session idle; the final
 * history a channel sends on close is synced into the session's history.
 */
import { queueSummaries } from './summary.js';
import { db } from '../db/index.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { config } from '../config.js';
import { auditTypes, recordAudit } from './events.store.js';
import {
  closeSessionRow, closedSessionConflict, idleSession, isPastResumeWindow, joinSession, lockSession, type EndedInteraction,
  countActiveInteractions, endActiveInteractions, endInteraction, insertInteraction, interactionSessionId, lockInteraction, timedOutInteractions, type NewInteraction,
} from './sessions.store.js';
import { interactionMessages } from './messages.store.js';
import { acceptEvent, appendHistory, forgetPublishable } from '../stream/index.js';
import type { Channel, ClosedInteraction, HistoryMessage, Interaction } from './sessions.schemas.js';

/** Audit rows of interactions that ended with their session. */
export function endedAudit(ended: EndedInteraction[], reason: string) {
  return ended.map((i) => ({ session_id: i.session_id, interaction_id: i.interaction_id, event_type: auditTypes.interactionEnded, payload: { channel: i.channel, reason } }));
}

/** Publishes CHANNEL_LEFT for interactions that ended with their session (not waited for: the session is closed already). */
export async function announceLeft(ended: EndedInteraction[]): Promise<void> {
  for (const i of ended) {
    await acceptEvent(i.session_id, { event_type: 'CHANNEL_LEFT', channel: i.channel as Channel, data: { interaction_id: i.interaction_id } }, { interactionId: i.interaction_id, allowClosed: true });
  }
}

/**
 * Attaches an interaction to a live session (404 unknown, 409 closed): the session becomes active
 * and its last activity now, an interaction_started audit row is written and CHANNEL_JOINED is
 * published (waited for, bounded by SESSION_PUBLISH_WAIT_MS, so events published after this returns
 * follow the join in the stream). A session past its resume window is expired here (as the sweep
 * would) and answered 409: it cannot be revived by joining it before the sweep runs.
 */
export async function startInteraction(sessionId: string, input: NewInteraction): Promise<Interaction> {
  const outcome = await db().transaction(async (trx) => {
    const session = await lockSession(trx, sessionId);
    if (session.status === 'closed') throw closedSessionConflict(sessionId);
    if (await isPastResumeWindow(trx, sessionId)) {
      const ended = (await endActiveInteractions(trx, sessionId)).map((i) => ({ ...i, session_id: sessionId }));
      await closeSessionRow(trx, sessionId);
      await recordAudit(trx, ...endedAudit(ended, 'session_expired'), { session_id: sessionId, event_type: auditTypes.sessionExpired, payload: { reason: 'expired', resume_window: session.resume_window } });
      return { kind: 'expired' as const, ended };
    }
    const row = await insertInteraction(trx, sessionId, input);
    await joinSession(trx, sessionId);
    await recordAudit(trx, {
      session_id: sessionId,
      interaction_id: row.interaction_id,
      event_type: auditTypes.interactionStarted,
      payload: { channel: input.channel, channel_ref: input.channel_ref ?? null, previous_session_status: session.status },
    });
    return { kind: 'joined' as const, row };
  });
  if (outcome.kind === 'expired') {
    await forgetPublishable([sessionId]);
    await announceLeft(outcome.ended);
    throw closedSessionConflict(sessionId);
  }
  const interaction = outcome.row;
  await acceptEvent(
    sessionId,
    { event_type: 'CHANNEL_JOINED', channel: interaction.channel, data: { interaction_id: interaction.interaction_id, channel_ref: interaction.channel_ref } },
    { interactionId: interaction.interaction_id, allowClosed: true, waitMs: config().sessions.publishWaitMs },
  );
  return interaction;
}

/**
 * Entries of a channel's final transcript that the history does not hold yet: each already-published
 * message of the interaction (same role and content) accounts for one equal entry.
 */
export function unsyncedEntries(finalHistory: HistoryMessage[], published: Array<{ role: string; content: string }>): HistoryMessage[] {
  const remaining = new Map<string, number>();
  for (const m of published) remaining.set(`${m.role}\u0000${m.content}`, (remaining.get(`${m.role}\u0000${m.content}`) ?? 0) + 1);
  return finalHistory.filter((entry) => {
    const key = `${entry.role}\u0000${entry.content}`;
    const left = remaining.get(key) ?? 0;
    if (left > 0) {
      remaining.set(key, left - 1);
      return false;
    }
    return true;
  });
}

/**
 * Closes an interaction (404 unknown, 409 already closed). When it was the session's last active
 * one the session becomes idle. final_history entries not yet in the history are appended (as
 * messages of the interaction's channel, in order), then CHANNEL_LEFT is published.
 */
export async function closeInteraction(interactionId: string, finalHistory?: HistoryMessage[], reason?: string): Promise<ClosedInteraction> {
  const { interaction, sessionStatus } = await db().transaction(async (trx) => {
    const sessionId = await interactionSessionId(trx, interactionId);
    if (!sessionId) throw new NotFoundError(`No interaction ${interactionId}.`);
    const session = await lockSession(trx, sessionId);
    const current = await lockInteraction(trx, interactionId);
    if (current.status !== 'active') {
      throw new ConflictError(`Interaction ${interactionId} is already closed.`, [], { current_status: current.status, allowed_next_states: [] });
    }
    const row = await endInteraction(trx, interactionId);
    let sessionStatus = session.status;
    if ((await countActiveInteractions(trx, session.session_id)) === 0 && session.status === 'active') {
      await idleSession(trx, session.session_id);
      sessionStatus = 'idle';
    }
    await recordAudit(trx, {
      session_id: session.session_id,
      interaction_id: interactionId,
      event_type: auditTypes.interactionEnded,
      payload: { channel: row.channel, session_status: sessionStatus, final_history_entries: finalHistory?.length ?? 0, ...(reason ? { reason } : {}) },
    });
    return { interaction: row, sessionStatus };
  });

  let synced = 0;
  if (finalHistory?.length) {
    const published = await interactionMessages(interactionId);
    const entries = unsyncedEntries(finalHistory, published);
    synced = entries.length;
    await appendHistory(interaction, entries, config().sessions.publishWaitMs);
    await recordAudit(db(), {
      session_id: interaction.session_id,
      interaction_id: interactionId,
      event_type: auditTypes.historySynced,
      payload: { received: finalHistory.length, appended: entries.length },
    });
  }
  await acceptEvent(
    interaction.session_id,
    { event_type: 'CHANNEL_LEFT', channel: interaction.channel, data: { interaction_id: interactionId, ...(reason ? { reason } : {}) } },
    { interactionId, allowClosed: true, waitMs: config().sessions.publishWaitMs },
  );
  // Summarised after the final history is in, so the model sees the whole conversation.
  if (sessionStatus === 'idle') await queueSummaries([interaction.session_id]);
  return { ...interaction, session_status: sessionStatus, synced_messages: synced };
}

/** Why a channel ended an interaction by itself. */
const timeoutReasons: Record<string, string> = { chatapp: 'customer_window_closed', chat: 'idle_timeout' };

/**
 * Ends the interactions their channel has ended (chatapp: the 24-hour customer window closed; web
 * chat: WEBCHAT_IDLE_SECONDS without a message), each as an explicit close would: CHANNEL_LEFT with
 * the reason, and the session idle when it was the last. Run by the expiry tick; returns how many.
 */
export async function endTimedOutInteractions(): Promise<number> {
  let ended = 0;
  for (const { interaction_id, channel } of await timedOutInteractions(config().sessions.webchatIdleSeconds)) {
    try {
      await closeInteraction(interaction_id, undefined, timeoutReasons[channel]);
      ended++;
    } catch (err) {
      // Closed meanwhile by its channel or by another tick: nothing left to do.
      if (!(err instanceof ConflictError)) throw err;
    }
  }
  return ended;
}
