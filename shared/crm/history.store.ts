/** Queries of crm_history: who changed a lead's status or an opportunity's stage, when, from what, to what. */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import type { HistoryEntry } from './schemas.js';

const TABLE = 'crm_history';

export type HistoryKind = { entity_type: 'lead'; field: 'status' } | { entity_type: 'opportunity'; field: 'stage' };

export interface Change {
  kind: HistoryKind;
  entity_id: string;
  from: string | null;
  to: string;
  actor: string;
}

export async function recordChange(change: Change, k: Knex = db()): Promise<void> {
  await k(TABLE).insert({ ...change.kind, entity_id: change.entity_id, from_value: change.from, to_value: change.to, actor: change.actor });
}

/** Changes of one entity, oldest first. */
export async function historyOf(kind: HistoryKind, entityId: string, k: Knex = db()): Promise<HistoryEntry[]> {
  const rows = await k(TABLE).where({ ...kind, entity_id: entityId }).orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map((r: { id: string; field: string; from_value: string | null; to_value: string; actor: string; created_at: Date }) => ({
    id: r.id,
    field: r.field,
    from: r.from_value,
    to: r.to_value,
    actor: r.actor,
    at: r.created_at.toISOString(),
  }));
}
