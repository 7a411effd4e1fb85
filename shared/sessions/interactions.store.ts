/** Query module of `session_interactions`: the channel interactions on a session. */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import { NotFoundError } from '../errors.js';
import type { Channel, Interaction } from './schemas.js';

const TABLE = 'session_interactions';
const COLUMNS: string[] = ['interaction_id', 'session_id', 'channel', 'channel_ref', 'status', 'started_at', 'ended_at', 'legacy_interaction_id', 'metadata'];

interface InteractionRow extends Omit<Interaction, 'started_at' | 'ended_at'> {
  started_at: Date;
  ended_at: Date | null;
}

const toDomain = (row: InteractionRow): Interaction => ({
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
  const row = (await db()(TABLE).select(COLUMNS).where({ interaction_id: interactionId }).first()) as InteractionRow | undefined;
  if (!row) throw new NotFoundError(`No interaction ${interactionId}.`);
  return toDomain(row);
}

/** Interactions of a session, oldest first. */
export async function listInteractions(sessionId: string): Promise<Interaction[]> {
  return ((await db()(TABLE).select(COLUMNS).where({ session_id: sessionId }).orderBy('started_at')) as InteractionRow[]).map(toDomain);
}

/** Records an active interaction on a session. */
export async function insertInteraction(k: Knex, sessionId: string, input: NewInteraction): Promise<Interaction> {
  const [row] = await k(TABLE)
    .insert({
      session_id: sessionId,
      channel: input.channel,
      channel_ref: input.channel_ref ?? null,
      metadata: JSON.stringify(input.metadata ?? {}),
      legacy_interaction_id: input.legacy_interaction_id ?? null,
    })
    .returning(COLUMNS);
  return toDomain(row as InteractionRow);
}

/** The session of an interaction, or undefined for an unknown interaction. */
export async function interactionSessionId(k: Knex, interactionId: string): Promise<string | undefined> {
  const found = await k(TABLE).select('session_id').where({ interaction_id: interactionId }).first();
  return found?.session_id as string | undefined;
}

/** Locks an interaction row for the rest of the transaction. */
export async function lockInteraction(trx: Knex.Transaction, interactionId: string): Promise<Interaction> {
  return toDomain((await trx(TABLE).select(COLUMNS).where({ interaction_id: interactionId }).forUpdate().first()) as InteractionRow);
}

/** Ends an interaction (closed, ended_at now). */
export async function endInteraction(k: Knex, interactionId: string): Promise<Interaction> {
  const [row] = await k(TABLE).where({ interaction_id: interactionId }).update({ status: 'closed', ended_at: k.fn.now() }).returning(COLUMNS);
  return toDomain(row as InteractionRow);
}

/** Ends every active interaction of a session; returns those ended. */
export async function endActiveInteractions(k: Knex, sessionId: string): Promise<Array<{ interaction_id: string; channel: string }>> {
  return k(TABLE)
    .where({ session_id: sessionId, status: 'active' })
    .update({ status: 'closed', ended_at: k.fn.now() })
    .returning(['interaction_id', 'channel']);
}

/** How many interactions of a session are active. */
export async function countActiveInteractions(k: Knex, sessionId: string): Promise<number> {
  const stillActive = await k(TABLE).where({ session_id: sessionId, status: 'active' }).count<{ count: number }[]>('* as count');
  return Number(stillActive[0]!.count);
}
