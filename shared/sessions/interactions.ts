/**
 * Channel interactions on a session (query module of `session_interactions` and the moves around it):
 * several may be active at once; closing the last active one makes the session idle; the final
 * history a channel sends on close is synced into the session's history.
 */
import { db } from '../db/index.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { config } from '../config.js';
import { auditTypes, recordAudit } from './events.store.js';
import { closedSessionConflict, lockSession, type Session } from './sessions.store.js';
import { acceptEvent, appendHistory } from './publish.js';
import type { Channel, HistoryMessage } from './schemas.js';

const TABLE = 'session_interactions';
const COLUMNS: string[] = ['interaction_id', 'session_id', 'channel', 'channel_ref', 'status', 'started_at', 'ended_at', 'legacy_interaction_id', 'metadata'];

export interface Interaction {
  interaction_id: string;
  session_id: string;
  channel: Channel;
  channel_ref: string | null;
  status: 'active' | 'closed';
  started_at: Date;
  ended_at: Date | null;
  legacy_interaction_id: string | null;
  metadata: Record<string, unknown>;
}

export interface NewInteraction {
  channel: Channel;
  channel_ref?: string | null;
  metadata?: Record<string, unknown>;
  legacy_interaction_id?: string | null;
}

/** The interaction, or NotFoundError. */
export async function getInteraction(interactionId: string): Promise<Interaction> {
  const row = (await db()(TABLE).select(COLUMNS).where({ interaction_id: interactionId }).first()) as Interaction | undefined;
  if (!row) throw new NotFoundError(`No interaction ${interactionId}.`);
  return row;
}

/** Interactions of a session, oldest first. */
export async function listInteractions(sessionId: string): Promise<Interaction[]> {
  return (await db()(TABLE).select(COLUMNS).where({ session_id: sessionId }).orderBy('started_at')) as Interaction[];
}

/**
 * Attaches an interaction to a live session (404 unknown, 409 closed): the session becomes active,
 * an interaction_started audit row is written and CHANNEL_JOINED is published (waited for, bounded by
 * SESSION_PUBLISH_WAIT_MS, so events published after this returns follow the join in the stream).
 */
export async function startInteraction(sessionId: string, input: NewInteraction): Promise<Interaction> {
  const interaction = await db().transaction(async (trx) => {
    const session = await lockSession(trx, sessionId);
    if (session.status === 'closed') throw closedSessionConflict(sessionId);
    const [row] = await trx(TABLE)
      .insert({
        session_id: sessionId,
        channel: input.channel,
        channel_ref: input.channel_ref ?? null,
        metadata: JSON.stringify(input.metadata ?? {}),
        legacy_interaction_id: input.legacy_interaction_id ?? null,
      })
      .returning(COLUMNS);
    if (session.status !== 'active') await trx('sessions').where({ session_id: sessionId }).update({ status: 'active' });
    await recordAudit(trx, {
      session_id: sessionId,
      interaction_id: row.interaction_id,
      event_type: auditTypes.interactionStarted,
      payload: { channel: input.channel, channel_ref: input.channel_ref ?? null, previous_session_status: session.status },
    });
    return row as Interaction;
  });
  await acceptEvent(
    sessionId,
    { event_type: 'CHANNEL_JOINED', channel: interaction.channel, data: { interaction_id: interaction.interaction_id, channel_ref: interaction.channel_ref } },
    { interactionId: interaction.interaction_id, allowClosed: true, waitMs: config().sessions.publishWaitMs },
  );
  return interaction;
}

export interface ClosedInteraction extends Interaction {
  session_status: Session['status'];
  /** Entries of final_history appended to the session's history (those not already in it). */
  synced_messages: number;
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
    const found = await trx<Interaction>(TABLE).select('session_id').where({ interaction_id: interactionId }).first();
    if (!found) throw new NotFoundError(`No interaction ${interactionId}.`);
    const session = await lockSession(trx, found.session_id);
    const current = (await trx(TABLE).select(COLUMNS).where({ interaction_id: interactionId }).forUpdate().first()) as Interaction;
    if (current.status !== 'active') {
      throw new ConflictError(`Interaction ${interactionId} is already closed.`, [], { status: current.status, allowed_next_states: [] });
    }
    const [row] = await trx(TABLE)
      .where({ interaction_id: interactionId })
      .update({ status: 'closed', ended_at: trx.fn.now() })
      .returning(COLUMNS);
    const stillActive = await trx(TABLE).where({ session_id: session.session_id, status: 'active' }).count<{ count: number }[]>('* as count');
    let sessionStatus = session.status;
    if (Number(stillActive[0]!.count) === 0 && session.status === 'active') {
      await trx('sessions').where({ session_id: session.session_id }).update({ status: 'idle' });
      sessionStatus = 'idle';
    }
    await recordAudit(trx, {
      session_id: session.session_id,
      interaction_id: interactionId,
      event_type: auditTypes.interactionEnded,
      payload: { channel: row.channel, session_status: sessionStatus, final_history_entries: finalHistory?.length ?? 0 },
    });
    return { interaction: row as Interaction, sessionStatus };
  });

  let synced = 0;
  if (finalHistory?.length) {
    const published = await db()('session_messages').select('role', 'content').where({ interaction_id: interactionId }).orderBy('sequence');
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
  return { ...interaction, session_status: sessionStatus, synced_messages: synced };
}
