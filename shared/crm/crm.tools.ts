/**
 * The spec's 15 crm_* agent tools (executor type crm), names and inputs exactly as listed. Where the
 * spec leaves a parameter unnamed we use the resource's id name (lead_id, account_id,
 * opportunity_id), `search` for the account search, and account_id / stage / pipeline_id as the
 * opportunity filters. Lists return up to `limit` (default 50) newest matches with `has_more` and
 * `next_cursor`; passing that cursor back returns the next older page.
 */
import { z, uuid } from '../zod.js';
import { asToolInput, defineTool, type ToolDefinition } from '../tools.js';
import { createAccount, getAccountDetail, updateAccount } from './accounts.js';
import { convertLead, createLead, getLead, updateLead } from './leads.js';
import { createOpportunity, getOpportunity, updateOpportunity } from './opportunities.js';
import { getPipeline, getPipelineSummary } from './pipelines.js';
import { listLeads } from './lead.store.js';
import { listAccounts } from './account.store.js';
import { listOpportunities } from './opportunity.store.js';
import { accountInput, isoDate, leadStatus, segments, settableLeadStatus } from './schemas.js';

const executor = 'crm';
const actor = 'agent';
const listSort = '-created_at';
/** Paging input of every crm_list_* tool. */
const paging = {
  cursor: z.string().max(1000).optional().describe('next_cursor of the previous call, to get the next (older) page'),
  limit: z.number().int().min(1).max(100).optional().describe('page size, 1 to 100 (default 50)'),
};
const listPage = (input: { cursor?: string; limit?: number }) => ({ limit: input.limit ?? 50, sort: listSort, cursor: input.cursor });
const str = z.string();

const page = <T>(p: { items: T[]; next_cursor: string | null }, key: string) => ({
  [key]: p.items,
  count: p.items.length,
  has_more: p.next_cursor !== null,
  next_cursor: p.next_cursor,
});

export const crmTools: ToolDefinition<any>[] = [
  defineTool({
    name: 'crm_list_leads',
    description: 'List leads, newest first (50 per page), optionally only those with a status. When has_more is true, call again with cursor = next_cursor for older leads.',
    executor,
    input: z.object({ status: leadStatus.optional().describe('only leads in this status'), ...paging }),
    handler: asToolInput(async ({ status, ...p }) => page(await listLeads({ status }, listPage(p)), 'leads')),
  }),
  defineTool({
    name: 'crm_get_lead',
    description: 'Get one lead by its UUID.',
    executor,
    input: z.object({ lead_id: uuid().describe('lead UUID') }),
    handler: ({ lead_id }) => getLead(lead_id),
  }),
  defineTool({
    name: 'crm_create_lead',
    description: 'Create a lead (status new). first_name and last_name are required.',
    executor,
    input: z.object({
      first_name: str.min(1).max(100),
      last_name: str.min(1).max(100),
      email: z.email().optional(),
      phone: str.optional(),
      company: str.optional(),
      title: str.optional(),
      source: str.optional().describe('website, linkedin, referral, trade_show, cold_call, email_campaign, social_media, webinar, or another value'),
      estimated_value: str.optional().describe('potential deal size, e.g. "25000"'),
      notes: str.optional(),
    }),
    handler: asToolInput((input) => createLead(input, actor)),
  }),
  defineTool({
    name: 'crm_update_lead',
    description: 'Update a lead\'s status or notes. Status moves: new→contacted→qualified; new, contacted or qualified→unqualified; unqualified→new. Conversion is crm_convert_lead.',
    executor,
    input: z.object({ lead_id: uuid(), status: settableLeadStatus.optional(), notes: str.optional() }),
    handler: asToolInput(({ lead_id, ...changes }) => updateLead(lead_id, changes, actor)),
  }),
  defineTool({
    name: 'crm_convert_lead',
    description: 'Convert a qualified lead into an opportunity at the first stage of the default pipeline; with create_account, also an account from the company name (an existing account with that name or domain is reused).',
    executor,
    input: z.object({
      lead_id: uuid(),
      opportunity_name: str.min(1).max(200).optional(),
      amount: z.number().min(0).optional(),
      close_date: isoDate.optional(),
      create_account: z.boolean().optional(),
    }),
    handler: asToolInput(({ lead_id, ...input }) => convertLead(lead_id, input, actor)),
  }),
  defineTool({
    name: 'crm_list_accounts',
    description: 'List accounts, newest first (50 per page), optionally matching a search on name or domain. When has_more is true, call again with cursor = next_cursor for older accounts.',
    executor,
    input: z.object({ search: str.optional().describe('part of the account name or domain'), ...paging }),
    handler: asToolInput(async ({ search, ...p }) => page(await listAccounts({ search }, listPage(p)), 'accounts')),
  }),
  defineTool({
    name: 'crm_get_account',
    description: 'Get an account with its linked opportunities.',
    executor,
    input: z.object({ account_id: uuid() }),
    handler: ({ account_id }) => getAccountDetail(account_id),
  }),
  defineTool({
    name: 'crm_create_account',
    description: 'Create an account. name is required; segment is SMB, Mid-Market or Enterprise.',
    executor,
    input: accountInput,
    handler: asToolInput((input) => createAccount(input)),
  }),
  defineTool({
    name: 'crm_update_account',
    description: 'Update an account\'s name, domain, industry or segment.',
    executor,
    input: z.object({ account_id: uuid(), name: str.min(1).max(200).optional(), domain: str.max(255).toLowerCase().optional(), industry: str.max(100).optional(), segment: z.enum(segments).optional() }),
    handler: asToolInput(({ account_id, ...changes }) => updateAccount(account_id, changes)),
  }),
  defineTool({
    name: 'crm_list_opportunities',
    description: 'List opportunities, newest first (50 per page), filtered by account, stage name and/or pipeline. When has_more is true, call again with cursor = next_cursor (and the same filters) for older ones.',
    executor,
    input: z.object({ account_id: uuid().optional(), stage: str.optional(), pipeline_id: uuid().optional(), ...paging }),
    handler: asToolInput(async ({ cursor, limit, ...filters }) => page(await listOpportunities(filters, listPage({ cursor, limit })), 'opportunities')),
  }),
  defineTool({
    name: 'crm_get_opportunity',
    description: 'Get an opportunity\'s details.',
    executor,
    input: z.object({ opportunity_id: uuid() }),
    handler: ({ opportunity_id }) => getOpportunity(opportunity_id),
  }),
  defineTool({
    name: 'crm_create_opportunity',
    description: 'Create an opportunity in the default pipeline. stage must be a stage of it (default: the first); probability defaults to the stage\'s.',
    executor,
    input: z.object({
      name: str.min(1).max(200),
      account_id: uuid().optional(),
      stage: str.optional(),
      amount: z.number().min(0).optional(),
      close_date: isoDate.optional(),
      probability: z.number().int().min(0).max(100).optional(),
    }),
    handler: asToolInput((input) => createOpportunity(input, actor)),
  }),
  defineTool({
    name: 'crm_update_opportunity',
    description: 'Update an opportunity\'s stage (probability follows the stage), amount or close date.',
    executor,
    input: z.object({ opportunity_id: uuid(), stage: str.optional(), amount: z.number().min(0).optional(), close_date: isoDate.optional() }),
    handler: asToolInput(({ opportunity_id, ...changes }) => updateOpportunity(opportunity_id, changes, actor)),
  }),
  defineTool({
    name: 'crm_get_pipeline',
    description: 'The default pipeline\'s stage configuration: stages in order with their probabilities.',
    executor,
    input: z.object({}),
    handler: () => getPipeline(),
  }),
  defineTool({
    name: 'crm_get_pipeline_summary',
    description: 'Counts and values per stage of the default pipeline: count, value, weighted_value (Σ amount × probability / 100), probability, state (open, won at 100 %, lost at 0 %); totals of the open stages (pipeline_value, weighted_value) with won and lost apart.',
    executor,
    input: z.object({}),
    handler: () => getPipelineSummary(),
  }),
];
