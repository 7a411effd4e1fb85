/** The lead aggregate's store: crm_leads (their history entries go through history.store.ts). */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import { containsPattern, paginate, type KeysetPage, type KeysetPageRequest, type SortField } from './pagination.js';
import { leadTransitions, type Lead, type LeadInput, type LeadStatus } from './crm.schemas.js';

const TABLE = 'crm_leads';
const FIELDS = [
  'id', 'first_name', 'last_name', 'email', 'phone', 'company', 'title', 'status', 'source', 'source_detail', 'estimated_value',
  'notes', 'custom_data', 'converted_at', 'converted_opportunity_id', 'converted_account_id', 'created_at', 'updated_at',
];
const COLUMNS = FIELDS.map((c) => `l.${c}`);

interface LeadRow extends Omit<Lead, 'created_at' | 'updated_at' | 'converted_at' | 'allowed_next_states'> {
  created_at: Date;
  updated_at: Date;
  converted_at: Date | null;
}

const toDomain = (row: LeadRow): Lead => ({
  ...row,
  allowed_next_states: leadTransitions[row.status],
  converted_at: row.converted_at?.toISOString() ?? null,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

/** A lead as written; `id` is assigned by the caller so batch outcomes map back to input positions. */
export type NewLead = LeadInput & { id: string };

export const leadSorts: Record<string, SortField> = {
  created_at: { sql: 'l.created_at', type: 'timestamptz' },
  updated_at: { sql: 'l.updated_at', type: 'timestamptz' },
  first_name: { sql: 'l.first_name', type: 'text' },
  last_name: { sql: 'l.last_name', type: 'text' },
  company: { sql: `coalesce(l.company, '')`, type: 'text' },
  status: { sql: 'l.status', type: 'text' },
};

export interface LeadFilters {
  status?: LeadStatus;
  source?: string;
  /** Matched anywhere in first name, last name, full name, email or company (case-insensitive). */
  search?: string;
}

export async function listLeads(filters: LeadFilters, page: KeysetPageRequest, k: Knex = db()): Promise<KeysetPage<Lead>> {
  const q = k(`${TABLE} as l`).select(COLUMNS);
  if (filters.status) q.where('l.status', filters.status);
  if (filters.source) q.whereRaw('lower(l.source) = lower(?)', [filters.source]);
  if (filters.search) {
    const p = containsPattern(filters.search);
    q.where((w) =>
      w
        .whereILike('l.first_name', p)
        .orWhereILike('l.last_name', p)
        .orWhereRaw(`(l.first_name || ' ' || l.last_name) ilike ?`, [p])
        .orWhereILike('l.email', p)
        .orWhereILike('l.company', p),
    );
  }
  const result = await paginate<LeadRow>(q, leadSorts, 'l.id', page);
  return { items: result.items.map(toDomain), next_cursor: result.next_cursor };
}

export async function findLead(id: string, options: { forUpdate?: boolean } = {}, k: Knex = db()): Promise<Lead | undefined> {
  const q = k(`${TABLE} as l`).select(COLUMNS).where('l.id', id).first();
  if (options.forUpdate) q.forUpdate();
  const row = await q;
  return row && toDomain(row);
}

/** Ids of existing leads with these emails (case-insensitive), keyed by lower-cased email. */
export async function leadIdsByEmail(emails: string[], k: Knex = db()): Promise<Map<string, string>> {
  if (!emails.length) return new Map();
  const rows = await k(TABLE)
    .select('id', k.raw('lower(email) as email'))
    .whereRaw('lower(email) = any(?::text[])', [`{${emails.map((e) => JSON.stringify(e.toLowerCase())).join(',')}}`]);
  return new Map(rows.map((r: { id: string; email: string }) => [r.email, r.id]));
}

export async function updateLeadRecord(id: string, changes: Record<string, unknown>, k: Knex = db()): Promise<void> {
  if (!Object.keys(changes).length) return;
  const record = 'custom_data' in changes ? { ...changes, custom_data: JSON.stringify(changes.custom_data ?? {}) } : changes;
  await k(TABLE).where({ id }).update(record);
}

export async function deleteLead(id: string, k: Knex = db()): Promise<boolean> {
  return (await k(TABLE).where({ id }).delete()) > 0;
}
