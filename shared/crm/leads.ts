/**
 * Leads: the lifecycle (new → contacted → qualified → converted, unqualified from the open states)
 * and conversion into an opportunity, optionally with an account. Every rule lives here, so REST
 * routes, agent tools and webhooks behave alike.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { db, isUniqueViolation } from '../db/index.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { findAccount, findAccountByNameOrDomain, insertAccountIfAbsent } from './account.store.js';
import { publishCrmEvent } from './events.js';
import { recordChange } from './history.store.js';
import { findLead, leadIdsByEmail, updateLeadRecord, deleteLead as deleteLeadRow } from './lead.store.js';
import { insertLeads } from './insert-leads.sql.js';
import { insertOpportunity } from './opportunity.store.js';
import { getOpportunity } from './opportunities.js';
import { findDefaultPipeline, findPipeline } from './pipeline.store.js';
import type { Account, Conversion, ConversionInput, Lead, LeadInput, LeadStatus, LeadUpdate } from './crm.schemas.js';

import { leadTransitions } from './crm.schemas.js';

export { leadTransitions };

/** Throws a 409 naming the allowed next states unless `from → to` is a move of the lifecycle set by an update. */
export function assertLeadTransition(from: LeadStatus, to: LeadStatus): void {
  const allowed = leadTransitions[from];
  const extensions = { current_status: from, allowed_next_states: allowed };
  if (to === 'converted' && allowed.includes('converted')) {
    throw new ConflictError('A lead becomes converted only by conversion (POST /api/v1/leads/{id}/convert or crm_convert_lead).', [], extensions);
  }
  if (!allowed.includes(to)) {
    const next = allowed.length ? allowed.join(', ') : 'none (final state)';
    throw new ConflictError(`A ${from} lead cannot move to ${to}; allowed next states: ${next}.`, [], extensions);
  }
}

/** The 409 for an email another lead has (case-insensitive), naming that lead. */
export async function duplicateEmail(email: string, k: Knex = db()): Promise<ConflictError> {
  const existing = (await leadIdsByEmail([email], k)).get(email.toLowerCase());
  return new ConflictError('A lead with this email already exists.', [{ path: 'body.email', message: 'is already used by another lead' }], { existing_lead_id: existing ?? null });
}

export async function getLead(id: string): Promise<Lead> {
  const lead = await findLead(id);
  if (!lead) throw new NotFoundError(`No lead ${id}.`);
  return lead;
}

/** Creates a lead in status new (a `created` history entry); an email already used by a lead (case-insensitive) is a 409 naming it. */
export async function createLead(input: LeadInput, actor: string): Promise<Lead> {
  const id = randomUUID();
  const inserted = await insertLeads([{ ...input, id }], actor);
  if (!inserted.has(id)) throw await duplicateEmail(input.email!);
  publishCrmEvent('lead.created', { ids: [id], by: actor });
  return getLead(id);
}

/** Updates fields and/or status (lifecycle enforced, status change recorded with its actor). */
export async function updateLead(id: string, changes: LeadUpdate, actor: string): Promise<Lead> {
  let moved = false;
  try {
    await db().transaction(async (trx) => {
      const lead = await findLead(id, { forUpdate: true }, trx);
      if (!lead) throw new NotFoundError(`No lead ${id}.`);
      const { status, ...fields } = changes;
      const moves = status !== undefined && status !== lead.status;
      if (moves) assertLeadTransition(lead.status, status);
      await updateLeadRecord(id, { ...fields, ...(moves ? { status } : {}) }, trx);
      if (moves) await recordChange({ kind: { entity_type: 'lead', field: 'status' }, entity_id: id, from: lead.status, to: status, actor }, trx);
      moved = moves;
    });
  } catch (err) {
    if (isUniqueViolation(err, 'crm_leads_email_ci')) throw await duplicateEmail(changes.email!);
    throw err;
  }
  publishCrmEvent('lead.changed', moved ? { id, change: 'status', status: changes.status, by: actor } : { id, change: 'fields', by: actor });
  return getLead(id);
}

export async function deleteLead(id: string): Promise<void> {
  if (!(await deleteLeadRow(id))) throw new NotFoundError(`No lead ${id}.`);
  publishCrmEvent('lead.changed', { id, change: 'deleted' });
}

const freeMailDomains = new Set([
  'gmail.com', 'googlemail.com', 'yahoo.com', 'hotmail.com', 'outlook.com', 'live.com', 'msn.com', 'icloud.com', 'me.com',
  'aol.com', 'proton.me', 'protonmail.com', 'gmx.com', 'gmx.de', 'web.de', 'mail.com', 'yandex.com', 'zoho.com',
]);

/** The company domain implied by a work email (none for free-mail providers). */
export function companyDomain(email: string | null): string | null {
  const domain = email?.split('@')[1]?.trim().toLowerCase().replace(/^www\./, '');
  return domain && !freeMailDomains.has(domain) ? domain : null;
}

/** A deal size from the lead's free-text estimate ("5000", "$12,500.50"); 0 when it is not a number. */
export function estimatedAmount(value: string | null): number {
  const n = Number((value ?? '').replace(/[\s$€£,]/g, ''));
  return Number.isFinite(n) && n >= 0 ? Math.round(n * 100) / 100 : 0;
}

/**
 * Converts a qualified lead, in one transaction: an opportunity in the given (else the default)
 * pipeline at its first stage with that stage's probability; with create_account, the account named
 * after the company (an account with the same name or the email's domain is reused); the lead
 * becomes converted and points to both.
 */
export async function convertLead(id: string, input: ConversionInput, actor: string): Promise<Conversion> {
  const outcome = await db().transaction(async (trx) => {
    const lead = await findLead(id, { forUpdate: true }, trx);
    if (!lead) throw new NotFoundError(`No lead ${id}.`);
    if (lead.status === 'converted') {
      throw new ConflictError('The lead is already converted.', [], {
        current_status: lead.status,
        allowed_next_states: [],
        converted_opportunity_id: lead.converted_opportunity_id,
        converted_account_id: lead.converted_account_id,
      });
    }
    if (lead.status !== 'qualified') {
      throw new ConflictError(`Only qualified leads can be converted; this lead is ${lead.status} (allowed next states: ${leadTransitions[lead.status].join(', ')}).`, [], {
        current_status: lead.status,
        allowed_next_states: leadTransitions[lead.status],
      });
    }
    const pipeline = input.pipeline_id ? await findPipeline(input.pipeline_id, trx) : await findDefaultPipeline(trx);
    if (!pipeline) throw new ValidationError('The pipeline does not exist.', [{ path: 'body.pipeline_id', message: 'is not a pipeline' }]);
    const stage = pipeline.stages[0];
    if (!stage) throw new ValidationError('The pipeline has no stages.', [{ path: 'body.pipeline_id', message: 'has no stages' }]);

    let account: Account | undefined;
    let accountCreated = false;
    if (input.create_account) {
      if (!lead.company) throw new ValidationError('The lead has no company to create an account from.', [{ path: 'body.create_account', message: 'the lead has no company' }]);
      const domain = companyDomain(lead.email);
      account = await findAccountByNameOrDomain(lead.company, domain, trx);
      if (!account) {
        account = await insertAccountIfAbsent(trx, { name: lead.company, domain: domain ?? undefined });
        accountCreated = Boolean(account);
        // A concurrent conversion created it between our lookup and insert.
        account ??= await findAccountByNameOrDomain(lead.company, domain, trx);
      }
    }
    const fullName = `${lead.first_name} ${lead.last_name}`;
    const opportunityId = await insertOpportunity(
      {
        name: input.opportunity_name ?? (lead.company ? `${lead.company} – ${fullName}` : fullName),
        account_id: account?.id ?? null,
        pipeline_id: pipeline.id,
        stage_id: stage.id,
        amount: input.amount ?? estimatedAmount(lead.estimated_value),
        close_date: input.close_date ?? null,
        probability: stage.probability,
      },
      trx,
    );
    await updateLeadRecord(id, { status: 'converted', converted_at: trx.fn.now(), converted_opportunity_id: opportunityId, converted_account_id: account?.id ?? null }, trx);
    await recordChange({ kind: { entity_type: 'lead', field: 'status' }, entity_id: id, from: lead.status, to: 'converted', actor }, trx);
    await recordChange({ kind: { entity_type: 'opportunity', field: 'stage' }, entity_id: opportunityId, from: null, to: stage.name, actor }, trx);
    return { opportunityId, accountId: account?.id, accountCreated };
  });
  publishCrmEvent('lead.changed', { id, change: 'converted', status: 'converted', by: actor });
  publishCrmEvent('opportunity.changed', { id: outcome.opportunityId, change: 'created', by: actor });
  if (outcome.accountCreated) publishCrmEvent('account.changed', { id: outcome.accountId, change: 'created' });
  return {
    lead: await getLead(id),
    opportunity: await getOpportunity(outcome.opportunityId),
    account: outcome.accountId ? ((await findAccount(outcome.accountId)) ?? null) : null,
    account_created: outcome.accountCreated,
  };
}
