/** REST routes of opportunities. */
import { ApiRouter } from '../routing.js';
import { createOpportunity, deleteOpportunity, getOpportunity, updateOpportunity } from '../../shared/crm/opportunities.js';
import { listOpportunities } from '../../shared/crm/opportunity.store.js';
import { historyOf } from '../../shared/crm/history.store.js';
import { opportunity, opportunityInput, opportunityUpdate } from '../../shared/crm/crm.schemas.js';
import { actorHeaders, actorOf, historyList, listDescription, pageOf, toPage } from './common.schemas.js';
import { opportunityParams, opportunityQuery } from './opportunities.schemas.js';

const stageRules = [
  '`stage` is a stage name of the opportunity\'s pipeline (case-insensitive; default pipeline unless `pipeline_id`); another name is a 400',
  'listing the valid stages (`valid_stages`). Any stage may follow any other (moves back and reopening are allowed); each change is',
  'recorded in the history with `X-Actor`. `probability` (0–100) defaults to the stage\'s, and follows the stage when the stage changes',
  'unless given in the same request. `amount` ≥ 0 (default 0).',
].join('\n');

export function opportunityRoutes(): ApiRouter {
  return new ApiRouter()
    .route({
      method: 'get',
      path: '/api/v1/opportunities',
      tags: ['crm'],
      summary: 'List opportunities',
      description: `Filters: \`account_id\`, \`pipeline_id\`, \`stage\` (stage name, case-insensitive), \`q\` (text search in the name).\n\n${listDescription}`,
      auth: 'key-or-sales-or-sre',
      request: { query: opportunityQuery },
      responses: { 200: { description: 'A page of opportunities', schema: pageOf(opportunity, 'OpportunityPage') } },
      handler: async ({ query }) => toPage(await listOpportunities({ account_id: query.account_id, pipeline_id: query.pipeline_id, stage: query.stage, search: query.q }, query)),
    })
    .route({
      method: 'post',
      path: '/api/v1/opportunities',
      tags: ['crm'],
      summary: 'Create an opportunity',
      description: `${stageRules}\nWithout \`stage\` the opportunity starts at the pipeline's first stage. An unknown \`account_id\` or \`pipeline_id\` is a 400.`,
      auth: 'key-or-sales-or-sre',
      request: { body: opportunityInput, headers: actorHeaders },
      responses: { 201: { description: 'The opportunity', schema: opportunity } },
      handler: ({ body, headers }, ctx) => createOpportunity(body, actorOf(headers, ctx)),
    })
    .route({
      method: 'get',
      path: '/api/v1/opportunities/{opportunity_id}',
      tags: ['crm'],
      summary: 'Get an opportunity',
      auth: 'key-or-sales-or-sre',
      request: { params: opportunityParams },
      responses: { 200: { description: 'The opportunity', schema: opportunity } },
      handler: ({ params }) => getOpportunity(params.opportunity_id),
    })
    .route({
      method: 'patch',
      path: '/api/v1/opportunities/{opportunity_id}',
      tags: ['crm'],
      summary: 'Update an opportunity',
      description: `${stageRules}\nChanging \`pipeline_id\` needs a \`stage\` of the new pipeline. \`account_id\` and \`close_date\` may be set to null.`,
      auth: 'key-or-sales-or-sre',
      request: { params: opportunityParams, body: opportunityUpdate, headers: actorHeaders },
      responses: { 200: { description: 'The opportunity', schema: opportunity } },
      handler: ({ params, body, headers }, ctx) => updateOpportunity(params.opportunity_id, body, actorOf(headers, ctx)),
    })
    .route({
      method: 'delete',
      path: '/api/v1/opportunities/{opportunity_id}',
      tags: ['crm'],
      summary: 'Delete an opportunity',
      description: 'A lead converted into it keeps its status; its `converted_opportunity_id` becomes null.',
      auth: 'key-or-sales-or-sre',
      request: { params: opportunityParams },
      responses: { 204: { description: 'Deleted' } },
      handler: async ({ params }, ctx) => {
        await deleteOpportunity(params.opportunity_id);
        ctx.status = 204;
      },
    })
    .route({
      method: 'get',
      path: '/api/v1/opportunities/{opportunity_id}/history',
      tags: ['crm'],
      summary: 'Stage and probability history of an opportunity',
      description: 'Oldest first. `field` `stage`: every stage change (from, to, actor, time), the first entry (from null) being its creation; `field` `probability`: the probability followed a change of its stage\'s default probability (only opportunities whose probability was never set by hand follow it).',
      auth: 'key-or-sales-or-sre',
      request: { params: opportunityParams },
      responses: { 200: { description: 'The changes', schema: historyList } },
      handler: async ({ params }) => {
        await getOpportunity(params.opportunity_id);
        return { data: await historyOf('opportunity', params.opportunity_id) };
      },
    });
}
