/**
 * The spec's 15 crm_* agent tools (executor type crm), names and inputs exactly as listed. Where the
 * spec leaves a parameter unnamed we use the resource's id name (lead_id, account_id,
 * opportunity_id), `search` for the account search, and account_id / stage / pipeline_id as the
 * opportunity filters. The list tools take the filters, `sort` and cursor of their REST routes (`search`
 * is the routes' `q`) and return up to `limit` (default 50) matches with `has_more` and `next_cursor`;
 * passing that cursor back (same filters and sort) returns the next page. The update tools take every
 * field their REST PATCH route takes.
 */
import { z, uuid } from '../zod.js';
import { asToolInput, defineTool, type ToolDefinition } from '../tools.js';
import { createAccount, getAccountDetail, updateAccount } from './accounts.js';
import { convertLead, createLead, getLead, updateLead } from './leads.js';
import { createOpportunity, getOpportunity, updateOpportunity } from './opportunities.js';
import { getPipeline, getPipelineSummary } from './pipelines.js';
import { leadSorts, listLeads } from './lead.store.js';
import { accountSorts, listAccounts } from './account.store.js';
import { listOpportunities, opportunitySorts } from './opportunity.store.js';
import { accountInput, accountUpdate, isoDate, leadStatus, leadUpdate, opportunityUpdate, segments, settableLeadStatus } from './crm.schemas.js';

const executor = 'crm';
const actor = 'agent';
/** Paging input of a crm_list_* tool: the sorts its REST route offers (a field, `-` for descending), cursor and page size. */
const paging = (sorts: Record<string, unknown>, defaultSort: string) => ({
  sort: z
    .enum(Object.keys(sorts).flatMap((f) => [f, `-${f}`]) as [string, ...string[]])
    .optional()
    .describe(`sort field, "-" prefix for descending (default ${defaultSort})`),
  cursor: z.string().max(1000).optional().describe('next_cursor of the previous call (with the same filters and sort), to get the next page'),
  limit: z.number().int().min(1).max(100).optional().describe('page size, 1 to 100 (default 50)'),
});
const listPage = (input: { cursor?: string; limit?: number; sort?: string }, defaultSort = '-created_at') => ({ limit: input.limit ?? 50, sort: input.sort ?? defaultSort, cursor: input.cursor });
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
    description: 'List leads, newest first (50 per page), optionally filtered by status, source and a text search. When has_more is true, call again with cursor = next_cursor for the next page.',
    executor,
    changesData: false,
    input: z.object({
      status: leadStatus.optional().describe('only leads in this status'),
      source: str.max(100).optional().describe('only leads from this source (case-insensitive)'),
      search: str.max(200).optional().describe('text in first name, last name, full name, email or company'),
      ...paging(leadSorts, '-created_at'),
    }),
    handler: asToolInput(async ({ status, source, search, ...p }) => page(await listLeads({ status, source, search }, listPage(p)), 'leads')),
  }),
  defineTool({
    name: 'crm_get_lead',
    description: 'Get one lead by its UUID.',
    executor,
    changesData: false,
    input: z.object({ lead_id: uuid().describe('lead UUID') }),
    handler: ({ lead_id }) => getLead(lead_id),
  }),
  defineTool({
    name: 'crm_create_lead',
    description: 'Create a lead (status new). first_name and last_name are required.',
    executor,
    changesData: true,
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
    description:
      'Update a lead\'s fields (any of first_name, last_name, email, phone, company, title, source, source_detail, estimated_value, notes, custom_data) and/or its status. Status moves: new→contacted→qualified; new, contacted or qualified→unqualified; unqualified→new. Conversion is crm_convert_lead.',
    executor,
    changesData: true,
    input: leadUpdate.omit({ status: true }).extend({ lead_id: uuid(), status: settableLeadStatus.optional() }),
    handler: asToolInput(({ lead_id, ...changes }) => updateLead(lead_id, changes, actor)),
  }),
  defineTool({
    name: 'crm_convert_lead',
    description: 'Convert a qualified lead into an opportunity at the first stage of the default pipeline; with create_account, also an account from the company name (an existing account with that name or domain is reused).',
    executor,
    changesData: true,
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
    description: 'List accounts, by name (50 per page), optionally matching a search on name or domain, a segment and an industry. When has_more is true, call again with cursor = next_cursor for the next page.',
    executor,
    changesData: false,
    input: z.object({
      search: str.max(200).optional().describe('part of the account name or domain'),
      segment: z.enum(segments).optional(),
      industry: str.max(100).optional().describe('industry (case-insensitive)'),
      ...paging(accountSorts, 'name'),
    }),
    handler: asToolInput(async ({ search, segment, industry, ...p }) => page(await listAccounts({ search, segment, industry }, listPage(p, 'name')), 'accounts')),
  }),
  defineTool({
    name: 'crm_get_account',
    description: 'Get an account with its linked opportunities.',
    executor,
    changesData: false,
    input: z.object({ account_id: uuid() }),
    handler: ({ account_id }) => getAccountDetail(account_id),
  }),
  defineTool({
    name: 'crm_create_account',
    description: 'Create an account. name is required; segment is SMB, Mid-Market or Enterprise.',
    executor,
    changesData: true,
    input: accountInput,
    handler: asToolInput((input) => createAccount(input)),
  }),
  defineTool({
    name: 'crm_update_account',
    description: 'Update an account\'s name, domain, industry or segment.',
    executor,
    changesData: true,
    input: accountUpdate.extend({ account_id: uuid() }),
    handler: asToolInput(({ account_id, ...changes }) => updateAccount(account_id, changes)),
  }),
  defineTool({
    name: 'crm_list_opportunities',
    description: 'List opportunities, newest first (50 per page), filtered by account, stage name, pipeline and/or a search in the name. When has_more is true, call again with cursor = next_cursor (and the same filters) for the next page.',
    executor,
    changesData: false,
    input: z.object({
      account_id: uuid().optional(),
      stage: str.max(100).optional(),
      pipeline_id: uuid().optional(),
      search: str.max(200).optional().describe('text in the opportunity name'),
      ...paging(opportunitySorts, '-created_at'),
    }),
    handler: asToolInput(async ({ cursor, limit, sort, ...filters }) => page(await listOpportunities(filters, listPage({ cursor, limit, sort })), 'opportunities')),
  }),
  defineTool({
    name: 'crm_get_opportunity',
    description: 'Get an opportunity\'s details.',
    executor,
    changesData: false,
    input: z.object({ opportunity_id: uuid() }),
    handler: ({ opportunity_id }) => getOpportunity(opportunity_id),
  }),
  defineTool({
    name: 'crm_create_opportunity',
    description: 'Create an opportunity in the default pipeline. stage must be a stage of it (default: the first); probability defaults to the stage\'s.',
    executor,
    changesData: true,
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
    description: 'Update an opportunity: stage (probability follows the stage unless given), amount, close_date (null clears it), name, account_id (null unlinks), probability, pipeline_id (with a stage of that pipeline).',
    executor,
    changesData: true,
    input: opportunityUpdate.extend({ opportunity_id: uuid() }),
    handler: asToolInput(({ opportunity_id, ...changes }) => updateOpportunity(opportunity_id, changes, actor)),
  }),
  defineTool({
    name: 'crm_get_pipeline',
    description: 'The default pipeline\'s stage configuration: stages in order with their probabilities.',
    executor,
    changesData: false,
    input: z.object({}),
    handler: () => getPipeline(),
  }),
  defineTool({
    name: 'crm_get_pipeline_summary',
    description: 'Counts and values per stage of the default pipeline: count, value, weighted_value (Σ amount × probability / 100), probability, state (open, won at 100 %, lost at 0 %); totals of the open stages (pipeline_value, weighted_value) with won and lost apart.',
    executor,
    changesData: false,
    input: z.object({}),
    handler: () => getPipelineSummary(),
  }),
];
