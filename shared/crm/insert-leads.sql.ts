/** Operation across the lead aggregate and the CRM history: new leads and their `created` entries, in one statement. */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import type { NewLead } from './lead.store.js';

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
       insert into crm_leads (id, first_name, last_name, email, phone, company, title, source, source_detail, estimated_value, notes, custom_data)
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
