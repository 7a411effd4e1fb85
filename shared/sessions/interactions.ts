/**
 * Channel interactions on a session (the moves; their SQL is in interactions.store.ts):
 * several may be active at once; closing the last active one makes the session idle; the final
 * history a channel sends on close is synced into the session's history.
 */
import { queueSummaries } from './summary.js';
import { db } from '../db/index.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { config } from '../config.js';
import { auditTypes, recordAudit } from './events.store.js';
import { activateSession, closedSessionConflict, idleSession, lockSession } from './sessions.store.js';
import {
  countActiveInteractions, endInteraction, insertInteraction, interactionSessionId, lockInteraction, type NewInteraction,
} from './interactions.store.js';
import { interactionMessages } from './messages.store.js';
import { acceptEvent, appendHistory } from './publish.js';
import type { ClosedInteraction, HistoryMessage, Interaction } from './schemas.js';

/**
 * Attaches an interaction to a live session (404 unknown, 409 closed): the session becomes active,
 * an interaction_started audit row is written and CHANNEL_JOINED is published (waited for, bounded by
 * SESSION_PUBLISH_WAIT_MS, so events published after this returns follow the join in the stream).
 */
export async function startInteraction(sessionId: string, input: NewInteraction): Promise<Interaction> {
  const interaction = await db().transaction(async (trx) => {
    const session = await lockSession(trx, sessionId);
    if (session.status === 'closed') throw closedSessionConflict(sessionId);
    const row = await insertInteraction(trx, sessionId, input);
    if (session.status !== 'active') await activateSession(trx, sessionId);
    await recordAudit(trx, {
      session_id: sessionId,
      interaction_id: row.interaction_id,
      event_type: auditTypes.interactionStarted,
      payload: { channel: input.channel, channel_ref: input.channel_ref ?? null, previous_session_status: session.status },
    });
    return row;
  });
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
export async function closeInteraction(interactionId: string, finalHistory?: HistoryMessage[]): Promise<ClosedInteraction> {
  const { interaction, sessionStatus } = await db().transaction(async (trx) => {
    const sessionId = await interactionSessionId(trx, interactionId);
    if (!sessionId) throw new NotFoundError(`No interaction ${interactionId}.`);
    const session = await lockSession(trx, sessionId);
    const current = await lockInteraction(trx, interactionId);
    if (current.status !== 'active') {
      throw new ConflictError(`Interaction ${interactionId} is already closed.`, [], { status: current.status, allowed_next_states: [] });
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
      payload: { channel: row.channel, session_status: sessionStatus, final_history_entries: finalHistory?.length ?? 0 },
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
  await acceptEvent(interaction.session_id, { event_type: 'CHANNEL_LEFT', channel: interaction.channel, data: { interaction_id: interactionId } }, { interactionId, allowClosed: true, waitMs: config().sessions.publishWaitMs });
  // Summarised after the final history is in, so the model sees the whole conversation.
  if (sessionStatus === 'idle') await queueSummaries([interaction.session_id]);
  return { ...interaction, session_status: sessionStatus, synced_messages: synced };
}
