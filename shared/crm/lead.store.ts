/** Queries of crm_leads. */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import { containsPattern, paginate, type KeysetPage, type KeysetPageRequest, type SortField } from './pagination.js';
import { leadTransitions, type Lead, type LeadInput, type LeadStatus } from './model.js';

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

/**
 * Inserts leads with one multi-row statement (the rows travel as one JSON parameter), recording each
 * creation in the history in the same statement. A lead whose email already exists
 * (case-insensitive) is skipped by the unique index; returns the ids inserted.
 */
export async function insertLeads(leads: NewLead[], actor: string, k: Knex = db()): Promise<Set<string>> {
  if (!leads.length) return new Set();
  const rows = leads.map((l) => ({ ...l, custom_data: l.custom_data ?? {} }));
  const { rows: inserted } = await k.raw(
    `with inserted as (
       insert into ${TABLE} (id, first_name, last_name, email, phone, company, title, source, source_detail, estimated_value, notes, custom_data)
       select id, first_name, last_name, email, phone, company, title, source, source_detail, estimated_value, notes, custom_data
         from jsonb_to_recordset(?::jsonb) as x(id uuid, first_name text, last_name text, email text, phone text, company text, title text,
                                               source text, source_detail text, estimated_value text, notes text, custom_data jsonb)
       on conflict ((lower(email))) where email is not null do nothing
       returning id, source, source_detail
     ), recorded as (
       insert into crm_history (entity_type, entity_id, field, from_value, to_value, actor, detail)
       select 'lead', id, 'created', null, 'new', ?, jsonb_build_object('source', source, 'source_detail', source_detail) from inserted
     )
     select id from inserted`,
    [JSON.stringify(rows), actor],
  );
  return new Set(inserted.map((r: { id: string }) => r.id));
}

/** Lead fields a resubmission may fill or differ in (email is the match key). */
const RESUBMITTED = ['first_name', 'last_name', 'phone', 'company', 'title', 'source', 'source_detail', 'estimated_value', 'notes'];

export interface Resubmission {
  index: number;
  lead_id: string;
  status: LeadStatus;
  /** Fields that were empty and now hold the submitted value. */
  filled: Record<string, unknown>;
  /** Fields whose submitted value differs from the kept one. */
  differing: Record<string, { current: unknown; submitted: unknown }>;
}

/**
 * Applies repeat submissions of existing leads (matched by email, case-insensitive) with one
 * statement: empty fields are filled, custom_data gains the keys it lacks, differing values are kept
 * and, with the fills, recorded as a `resubmission` history entry naming the submission's source.
 * Status never changes (a converted lead stays converted). Each email must appear once in `leads`.
 */
export async function resubmitLeads(leads: Array<{ index: number; lead: LeadInput }>, actor: string, k: Knex = db()): Promise<Resubmission[]> {
  if (!leads.length) return [];
  const { rows } = await k.raw(
    `with sub as (
       select (e->>'index')::int as idx, e->'lead' as lead from jsonb_array_elements(:subs::jsonb) e
     ), target as (
       select s.idx, s.lead, l.id, l.status, to_jsonb(l) as old
         from sub s join ${TABLE} l on lower(l.email) = lower(s.lead->>'email')
          for update of l
     ), diff as (
       select t.*,
              coalesce((select jsonb_object_agg(f, t.lead->f) from unnest(:fields::text[]) f
                         where t.lead->>f is not null and t.old->>f is null), '{}'::jsonb)
              || coalesce((select jsonb_build_object('custom_data', jsonb_object_agg(c.key, c.value))
                             from jsonb_each(coalesce(t.lead->'custom_data', '{}'::jsonb)) c
                            where not (t.old->'custom_data' \\? c.key)
                           having count(*) > 0), '{}'::jsonb) as filled,
              coalesce((select jsonb_object_agg(f, jsonb_build_object('current', t.old->f, 'submitted', t.lead->f)) from unnest(:fields::text[]) f
                         where t.lead->>f is not null and t.old->>f is not null and t.lead->>f <> t.old->>f), '{}'::jsonb)
              || coalesce((select jsonb_object_agg('custom_data.' || c.key, jsonb_build_object('current', t.old->'custom_data'->c.key, 'submitted', c.value))
                             from jsonb_each(coalesce(t.lead->'custom_data', '{}'::jsonb)) c
                            where t.old->'custom_data' \\? c.key and t.old->'custom_data'->c.key <> c.value), '{}'::jsonb) as differing
         from target t
     ), updated as (
       update ${TABLE} l
          set phone = coalesce(l.phone, d.filled->>'phone'),
              company = coalesce(l.company, d.filled->>'company'),
              title = coalesce(l.title, d.filled->>'title'),
              source = coalesce(l.source, d.filled->>'source'),
              source_detail = coalesce(l.source_detail, d.filled->>'source_detail'),
              estimated_value = coalesce(l.estimated_value, d.filled->>'estimated_value'),
              notes = coalesce(l.notes, d.filled->>'notes'),
              custom_data = coalesce(d.filled->'custom_data', '{}'::jsonb) || l.custom_data
         from diff d
        where l.id = d.id and d.filled <> '{}'::jsonb
     ), recorded as (
       insert into crm_history (entity_type, entity_id, field, from_value, to_value, actor, detail)
       select 'lead', d.id, 'resubmission', null, coalesce(d.lead->>'source', 'unknown'), :actor,
              jsonb_build_object('source', d.lead->'source', 'source_detail', d.lead->'source_detail', 'status', d.status,
                                 'filled', d.filled, 'differing', d.differing)
         from diff d
     )
     select idx as index, id as lead_id, status, filled, differing from diff order by idx`,
    { subs: JSON.stringify(leads), fields: RESUBMITTED, actor },
  );
  return rows;
}

export async function updateLeadRecord(id: string, changes: Record<string, unknown>, k: Knex = db()): Promise<void> {
  if (!Object.keys(changes).length) return;
  const record = 'custom_data' in changes ? { ...changes, custom_data: JSON.stringify(changes.custom_data ?? {}) } : changes;
  await k(TABLE).where({ id }).update(record);
}

export async function deleteLead(id: string, k: Knex = db()): Promise<boolean> {
  return (await k(TABLE).where({ id }).delete()) > 0;
}
