/** REST routes of pipelines (with their stages) and the pipeline forecast summary. */
import { ApiRouter } from '../routing.js';
import { addStage, createPipeline, deleteStage, getPipeline, getPipelineSummary, updatePipeline, updateStage } from '../../shared/crm/pipelines.js';
import { listPipelines } from '../../shared/crm/pipeline.store.js';
import { pipeline, pipelineInput, pipelineSummary, pipelineUpdate, stageInput, stageUpdate } from '../../shared/crm/crm.schemas.js';
import { actorHeaders, actorOf } from './common.schemas.js';
import { pipelineList, pipelineParams, stageDeleteQuery, stageParams } from './pipelines.schemas.js';

const summaryDescription = [
  'The crm_get_pipeline_summary result: `stages` keyed by stage name (pipeline order) with `count`, `value` (Σ amount),',
  '`weighted_value` (Σ amount × the opportunity\'s probability / 100), the stage\'s `probability` and its `state`: a stage at',
  '100 % is `won`, at 0 % `lost`, any other `open`. `totals` (`opportunities`, `pipeline_value`, `weighted_value`) count the',
  'open stages only — a closed deal is not pipeline — and `totals.won` / `totals.lost` give `{count, value}` of the closed ones.',
  'Computed by one SQL query; amounts rounded to cents after summing.',
].join('\n');

export function pipelineRoutes(): ApiRouter {
  return new ApiRouter()
    .route({
      method: 'get',
      path: '/api/v1/pipelines',
      tags: ['crm'],
      summary: 'List pipelines with their stages',
      description: 'The default pipeline first. Pipeline records carry `id`, `name`, `is_default`, ordered `stages` and timestamps.',
      auth: 'key-or-sales-or-sre',
      responses: { 200: { description: 'The pipelines', schema: pipelineList } },
      handler: async () => ({ data: await listPipelines() }),
    })
    .route({
      method: 'post',
      path: '/api/v1/pipelines',
      tags: ['crm'],
      summary: 'Create a pipeline',
      description: 'Stages are ordered as given, each with its probability (0–100). The default pipeline is created by migration.',
      auth: 'key-or-sales-or-sre',
      request: { body: pipelineInput },
      responses: { 201: { description: 'The pipeline', schema: pipeline } },
      errors: { 409: 'A pipeline with this name exists' },
      handler: ({ body }) => createPipeline(body),
    })
    .route({
      method: 'get',
      path: '/api/v1/pipelines/default/summary',
      tags: ['crm'],
      summary: 'Forecast summary of the default pipeline',
      description: summaryDescription,
      auth: 'key-or-sales-or-sre',
      responses: { 200: { description: 'The summary', schema: pipelineSummary } },
      handler: () => getPipelineSummary(),
    })
    .route({
      method: 'get',
      path: '/api/v1/pipelines/{pipeline_id}',
      tags: ['crm'],
      summary: 'Get a pipeline with its stages',
      auth: 'key-or-sales-or-sre',
      request: { params: pipelineParams },
      responses: { 200: { description: 'The pipeline', schema: pipeline } },
      handler: ({ params }) => getPipeline(params.pipeline_id),
    })
    .route({
      method: 'get',
      path: '/api/v1/pipelines/{pipeline_id}/summary',
      tags: ['crm'],
      summary: 'Forecast summary of a pipeline',
      description: summaryDescription,
      auth: 'key-or-sales-or-sre',
      request: { params: pipelineParams },
      responses: { 200: { description: 'The summary', schema: pipelineSummary } },
      handler: ({ params }) => getPipelineSummary(params.pipeline_id),
    })
    .route({
      method: 'patch',
      path: '/api/v1/pipelines/{pipeline_id}',
      tags: ['crm'],
      summary: 'Rename a pipeline or make it the default',
      description: '`is_default` accepts only `true`: the previous default stops being the default in the same transaction, so there is always exactly one. Answers the pipeline.',
      auth: 'key-or-sales-or-sre',
      request: { params: pipelineParams, body: pipelineUpdate },
      responses: { 200: { description: 'The pipeline', schema: pipeline } },
      errors: { 409: 'Another pipeline has this name' },
      handler: ({ params, body }) => updatePipeline(params.pipeline_id, body),
    })
    .route({
      method: 'post',
      path: '/api/v1/pipelines/{pipeline_id}/stages',
      tags: ['crm'],
      summary: 'Add a stage',
      description: 'Placed at `position` (1-based; the stages from there move one down), else after the last stage. Answers the pipeline with its stages.',
      auth: 'key-or-sales-or-sre',
      request: { params: pipelineParams, body: stageInput },
      responses: { 201: { description: 'The pipeline', schema: pipeline } },
      errors: { 409: 'The pipeline has a stage with this name (case-sensitive)' },
      handler: ({ params, body }) => addStage(params.pipeline_id, body),
    })
    .route({
      method: 'patch',
      path: '/api/v1/pipelines/{pipeline_id}/stages/{stage_id}',
      tags: ['crm'],
      summary: 'Rename, move or re-weight a stage',
      description: [
        '`position` moves the stage (1-based; the others keep their order). A new `probability` is applied to the stage\'s opportunities that',
        'still use the stage default (created or moved there without a probability of their own); one whose probability was set by hand keeps it.',
        'Each changed opportunity gets a `probability` entry in its history, the stage one in its own (with `opportunities_updated`); actor from X-Actor.',
        'Renaming keeps the opportunities (they reference the stage by id) and their history text as it was.',
      ].join(' '),
      auth: 'key-or-sales-or-sre',
      request: { params: stageParams, body: stageUpdate, headers: actorHeaders },
      responses: { 200: { description: 'The pipeline', schema: pipeline } },
      errors: { 409: 'The pipeline has a stage with this name' },
      handler: ({ params, body, headers }, ctx) => updateStage(params.pipeline_id, params.stage_id, body, actorOf(headers, ctx)),
    })
    .route({
      method: 'delete',
      path: '/api/v1/pipelines/{pipeline_id}/stages/{stage_id}',
      tags: ['crm'],
      summary: 'Delete a stage',
      description: [
        'A stage holding opportunities needs `move_to`, another stage of the same pipeline: they move there in the same transaction',
        '(each move recorded in the opportunity\'s stage history; those using the stage default take the target\'s probability).',
        'Without it the answer is 409 with `opportunity_count`. All opportunities count, closed ones included: the pipeline knows no',
        '"closed" state beyond stage names, and every opportunity needs a stage. The last stage of a pipeline cannot be deleted (409).',
        'The remaining stages are renumbered 1..n. Answers the pipeline.',
      ].join(' '),
      auth: 'key-or-sales-or-sre',
      request: { params: stageParams, query: stageDeleteQuery, headers: actorHeaders },
      responses: { 200: { description: 'The pipeline', schema: pipeline } },
      errors: { 409: 'The stage holds opportunities and no `move_to` was given, or it is the only stage' },
      handler: ({ params, query, headers }, ctx) => deleteStage(params.pipeline_id, params.stage_id, query.move_to, actorOf(headers, ctx)),
    });
}
