/** REST routes of pipelines (with their stages) and the pipeline forecast summary. */
import { ApiRouter } from '../routing.js';
import { z, uuid } from '../../shared/zod.js';
import { createPipeline, getPipeline, getPipelineSummary } from '../../shared/crm/pipelines.js';
import { listPipelines } from '../../shared/crm/pipeline.store.js';
import { pipeline, pipelineInput, pipelineSummary } from '../../shared/crm/schemas.js';

const params = z.object({ pipeline_id: uuid() });
const summaryDescription = [
  'Exactly the crm_get_pipeline_summary result: `stages` keyed by stage name with `count`, `value` (Σ amount),',
  '`weighted_value` (Σ amount × the opportunity\'s probability / 100) and the stage\'s `probability`; `totals` over all stages',
  '(closed ones included). Computed by one SQL query; amounts rounded to cents after summing.',
].join('\n');

export function pipelineRoutes(): ApiRouter {
  return new ApiRouter()
    .route({
      method: 'get',
      path: '/api/v1/pipelines',
      tags: ['crm'],
      summary: 'List pipelines with their stages',
      description: 'The default pipeline first. Pipeline records carry `id`, `name`, `is_default`, ordered `stages` and timestamps.',
      auth: 'apiKey',
      responses: { 200: { description: 'The pipelines', schema: z.object({ data: z.array(pipeline) }) } },
      handler: async () => ({ data: await listPipelines() }),
    })
    .route({
      method: 'post',
      path: '/api/v1/pipelines',
      tags: ['crm'],
      summary: 'Create a pipeline',
      description: 'Stages are ordered as given, each with its probability (0–100). The default pipeline is created by migration.',
      auth: 'apiKey',
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
      auth: 'apiKey',
      responses: { 200: { description: 'The summary', schema: pipelineSummary } },
      handler: () => getPipelineSummary(),
    })
    .route({
      method: 'get',
      path: '/api/v1/pipelines/{pipeline_id}',
      tags: ['crm'],
      summary: 'Get a pipeline with its stages',
      auth: 'apiKey',
      request: { params },
      responses: { 200: { description: 'The pipeline', schema: pipeline } },
      handler: ({ params }) => getPipeline(params.pipeline_id),
    })
    .route({
      method: 'get',
      path: '/api/v1/pipelines/{pipeline_id}/summary',
      tags: ['crm'],
      summary: 'Forecast summary of a pipeline',
      description: summaryDescription,
      auth: 'apiKey',
      request: { params },
      responses: { 200: { description: 'The summary', schema: pipelineSummary } },
      handler: ({ params }) => getPipelineSummary(params.pipeline_id),
    });
}
