/** Queries of crm_history: who changed what (lead status, opportunity stage or probability, stage probability), when, from what, to what. */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import type { HistoryEntry } from './crm.schemas.js';

const TABLE = 'crm_history';

export type HistoryKind =
  | { entity_type: 'lead'; field: 'status' | 'created' | 'resubmission' }
  | { entity_type: 'opportunity'; field: 'stage' | 'probability' }
  | { entity_type: 'stage'; field: 'probability' };
export type EntityType = HistoryKind['entity_type'];

export interface Change {
  kind: HistoryKind;
  entity_id: string;
  from: string | null;
  to: string;
  actor: string;
  detail?: Record<string, unknown>;
}

const toRow = (change: Change) => ({
  ...change.kind,
  entity_id: change.entity_id,
  from_value: change.from,
  to_value: change.to,
  actor: change.actor,
  detail: change.detail ? JSON.stringify(change.detail) : null,
});

export async function recordChange(change: Change, k: Knex = db()): Promise<void> {
  await k(TABLE).insert(toRow(change));
}

/** Records many changes with one statement. */
export async function recordChanges(changes: Change[], k: Knex = db()): Promise<void> {
  if (changes.length) await k(TABLE).insert(changes.map(toRow));
}

/** Every recorded change of one entity (all fields), oldest first. */
export async function historyOf(entityType: EntityType, entityId: string, k: Knex = db()): Promise<HistoryEntry[]> {
  const rows = await k(TABLE).where({ entity_type: entityType, entity_id: entityId }).orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map((r: { id: string; field: string; from_value: string | null; to_value: string; actor: string; detail: Record<string, unknown> | null; created_at: Date }) => ({
    id: r.id,
    field: r.field,
    from: r.from_value,
    to: r.to_value,
    actor: r.actor,
    ...(r.detail ? { detail: r.detail } : {}),
    at: r.created_at.toISOString(),
  }));
}
