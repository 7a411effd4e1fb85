/** REST routes of leads: CRUD, lifecycle moves, conversion and history. */
import { ApiRouter } from '../routing.js';
import { convertLead, createLead, deleteLead, getLead, leadTransitions, updateLead } from '../../shared/crm/leads.js';
import { listLeads } from '../../shared/crm/lead.store.js';
import { historyOf } from '../../shared/crm/history.store.js';
import { conversion, conversionInput, lead, leadInput, leadUpdate } from '../../shared/crm/crm.schemas.js';
import { actorHeaders, actorOf, historyList, listDescription, pageOf, toPage } from './common.schemas.js';
import { leadParams, leadQuery } from './leads.schemas.js';

const lifecycle = Object.entries(leadTransitions)
  .map(([from, to]) => `\`${from}\` → ${to.length ? to.map((s) => `\`${s}\``).join(', ') : 'none (final)'}`)
  .join('; ');

export function leadRoutes(): ApiRouter {
  return new ApiRouter()
    .route({
      method: 'get',
      path: '/api/v1/leads',
      tags: ['crm'],
      summary: 'List leads',
      description: `Filters: \`status\`, \`source\` (case-insensitive), \`q\` (text search in first name, last name, full name, email and company).\n\n${listDescription}`,
      auth: 'key-or-sales-or-sre',
      request: { query: leadQuery },
      responses: { 200: { description: 'A page of leads', schema: pageOf(lead, 'LeadPage') } },
      handler: async ({ query }) => toPage(await listLeads({ status: query.status, source: query.source, search: query.q }, query)),
    })
    .route({
      method: 'post',
      path: '/api/v1/leads',
      tags: ['crm'],
      summary: 'Create a lead',
      description: 'Creates a lead in status `new` (its first history entry, `created`, names X-Actor). Emails are unique case-insensitively: a second lead with the same email is a 409 carrying `existing_lead_id` (only the public webhooks treat a repeat as a resubmission). `estimated_value` is kept as the given string.',
      auth: 'key-or-sales-or-sre',
      request: { body: leadInput, headers: actorHeaders },
      responses: { 201: { description: 'The lead', schema: lead } },
      errors: { 409: 'A lead with this email exists (`existing_lead_id`)' },
      handler: ({ body, headers }, ctx) => createLead(body, actorOf(headers, ctx)),
    })
    .route({
      method: 'get',
      path: '/api/v1/leads/{lead_id}',
      tags: ['crm'],
      summary: 'Get a lead',
      auth: 'key-or-sales-or-sre',
      request: { params: leadParams },
      responses: { 200: { description: 'The lead', schema: lead } },
      handler: ({ params }) => getLead(params.lead_id),
    })
    .route({
      method: 'patch',
      path: '/api/v1/leads/{lead_id}',
      tags: ['crm'],
      summary: 'Update a lead (fields and/or status)',
      description: `Partial update. Status moves: ${lifecycle}. \`converted\` is reached only by POST /api/v1/leads/{lead_id}/convert. Setting the current status again is a no-op. An invalid move is a 409 with \`current_status\` and \`allowed_next_states\`. Status changes are recorded in the history with \`X-Actor\`.`,
      auth: 'key-or-sales-or-sre',
      request: { params: leadParams, body: leadUpdate, headers: actorHeaders },
      responses: { 200: { description: 'The updated lead', schema: lead } },
      errors: { 409: 'Invalid status move (names `allowed_next_states`) or email used by another lead' },
      handler: ({ params, body, headers }, ctx) => updateLead(params.lead_id, body, actorOf(headers, ctx)),
    })
    .route({
      method: 'delete',
      path: '/api/v1/leads/{lead_id}',
      tags: ['crm'],
      summary: 'Delete a lead',
      description: 'Deletes the lead; an opportunity or account created by its conversion stays.',
      auth: 'key-or-sales-or-sre',
      request: { params: leadParams },
      responses: { 204: { description: 'Deleted' } },
      handler: async ({ params }, ctx) => {
        await deleteLead(params.lead_id);
        ctx.status = 204;
      },
    })
    .route({
      method: 'post',
      path: '/api/v1/leads/{lead_id}/convert',
      tags: ['crm'],
      summary: 'Convert a qualified lead',
      description: [
        'One transaction: an opportunity in `pipeline_id` (default: the default pipeline) at its first stage with that stage\'s probability;',
        '`opportunity_name` defaults to "<company> – <first> <last>" (or the name alone), `amount` to the lead\'s `estimated_value` when it is a number (else 0).',
        'With `create_account: true` (default false) the account named after the lead\'s company is linked: an existing account with the same name',
        '(case-insensitive) or with the domain of the lead\'s work email (free-mail domains ignored) is reused, otherwise one is created',
        '(`account_created` tells which). The lead becomes `converted` and points to both. Only `qualified` leads convert: others, and a second',
        'conversion, are a 409. `create_account` for a lead without company is a 400.',
      ].join('\n'),
      auth: 'key-or-sales-or-sre',
      request: { params: leadParams, body: conversionInput, headers: actorHeaders },
      responses: { 201: { description: 'The conversion', schema: conversion } },
      errors: { 409: 'The lead is not qualified, or already converted' },
      handler: ({ params, body, headers }, ctx) => convertLead(params.lead_id, body, actorOf(headers, ctx)),
    })
    .route({
      method: 'get',
      path: '/api/v1/leads/{lead_id}/history',
      tags: ['crm'],
      summary: 'History of a lead',
      description: [
        'Oldest first. `field` is `created` (first entry: `to` is the source, `actor` who created it: `webhook`, `api` or the X-Actor),',
        '`status` (every move, conversions included) or `resubmission` (a webhook delivered this lead\'s email again: `to` is the',
        'submission\'s source, `detail` holds `source`, `source_detail`, the `filled` fields that were empty and now hold the',
        'submitted value, and `differing` fields as `{current, submitted}`, which are kept as they were).',
      ].join(' '),
      auth: 'key-or-sales-or-sre',
      request: { params: leadParams },
      responses: { 200: { description: 'The changes', schema: historyList } },
      handler: async ({ params }) => {
        await getLead(params.lead_id);
        return { data: await historyOf('lead', params.lead_id) };
      },
    });
}
