/** Operation across the lead aggregate and the CRM history: repeat submissions fill leads and leave `resubmission` entries, in one statement. */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import type { LeadInput, LeadStatus } from './crm.schemas.js';

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
         from sub s join crm_leads l on lower(l.email) = lower(s.lead->>'email')
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
       update crm_leads l
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
