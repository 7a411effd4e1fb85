/** Queries of crm_opportunities (read joined with the stage, whose name is the opportunity's `stage`). */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import { containsPattern, paginate, type KeysetPage, type KeysetPageRequest, type SortField } from './pagination.js';
import type { Opportunity } from './crm.schemas.js';

const TABLE = 'crm_opportunities';

interface OpportunityRow extends Omit<Opportunity, 'created_at' | 'updated_at'> {
  stage_id: string;
  created_at: Date;
  updated_at: Date;
}

/** Row as written: the stage is referenced by id. */
export interface OpportunityRecord {
  name: string;
  account_id: string | null;
  pipeline_id: string;
  stage_id: string;
  amount: number;
  close_date: string | null;
  probability: number;
  /** False once the probability was set by hand: stage probability changes then leave it alone. */
  probability_is_default?: boolean;
}

const toDomain = ({ stage_id: _stage, ...row }: OpportunityRow): Opportunity => ({
  ...row,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

function selectOpportunities(k: Knex) {
  return k(`${TABLE} as o`)
    .join('crm_pipeline_stages as s', 's.id', 'o.stage_id')
    .select('o.id', 'o.name', 'o.account_id', 'o.pipeline_id', 'o.stage_id', 's.name as stage', 'o.amount', k.raw('o.close_date::text as close_date'), 'o.probability', 'o.created_at', 'o.updated_at');
}

export const opportunitySorts: Record<string, SortField> = {
  created_at: { sql: 'o.created_at', type: 'timestamptz' },
  updated_at: { sql: 'o.updated_at', type: 'timestamptz' },
  name: { sql: 'o.name', type: 'text' },
  amount: { sql: 'o.amount', type: 'numeric' },
  probability: { sql: 'o.probability', type: 'integer' },
  close_date: { sql: `coalesce(o.close_date, 'infinity'::date)`, type: 'date' },
};

export interface OpportunityFilters {
  account_id?: string;
  pipeline_id?: string;
  /** Stage name, case-insensitive. */
  stage?: string;
  search?: string;
}

export async function listOpportunities(filters: OpportunityFilters, page: KeysetPageRequest, k: Knex = db()): Promise<KeysetPage<Opportunity>> {
  const q = selectOpportunities(k);
  if (filters.account_id) q.where('o.account_id', filters.account_id);
  if (filters.pipeline_id) q.where('o.pipeline_id', filters.pipeline_id);
  if (filters.stage) q.whereRaw('lower(s.name) = lower(?)', [filters.stage]);
  if (filters.search) q.whereILike('o.name', containsPattern(filters.search));
  const result = await paginate<OpportunityRow>(q, opportunitySorts, 'o.id', page);
  return { items: result.items.map(toDomain), next_cursor: result.next_cursor };
}

/** Every opportunity of an account (account detail), newest first. */
export async function opportunitiesOfAccount(accountId: string, k: Knex = db()): Promise<Opportunity[]> {
  const rows = await selectOpportunities(k).where('o.account_id', accountId).orderBy([{ column: 'o.created_at', order: 'desc' }, { column: 'o.id', order: 'desc' }]);
  return rows.map(toDomain);
}

export async function findOpportunity(id: string, k: Knex = db()): Promise<(Opportunity & { stage_id: string }) | undefined> {
  const row = (await selectOpportunities(k).where('o.id', id).first()) as OpportunityRow | undefined;
  return row && { ...toDomain(row), stage_id: row.stage_id };
}

export async function insertOpportunity(record: OpportunityRecord, k: Knex = db()): Promise<string> {
  const [row] = await k(TABLE).insert(record).returning('id');
  return row.id;
}

export async function updateOpportunityRecord(id: string, changes: Partial<OpportunityRecord>, k: Knex = db()): Promise<void> {
  if (Object.keys(changes).length) await k(TABLE).where({ id }).update(changes);
}

export async function deleteOpportunity(id: string, k: Knex = db()): Promise<boolean> {
  return (await k(TABLE).where({ id }).delete()) > 0;
}
