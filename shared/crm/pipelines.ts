/** Pipelines with their ordered stages, and the forecast summary. */
import { isUniqueViolation } from '../db/index.js';
import { ConflictError, NotFoundError, ServiceUnavailableError } from '../errors.js';
import { findDefaultPipeline, findPipeline, insertPipeline, pipelineSummary } from './pipeline.store.js';
import type { Pipeline, PipelineInput, PipelineSummary } from './schemas.js';

/** A pipeline by id, or the default one when no id is given. */
export async function getPipeline(id?: string): Promise<Pipeline> {
  const pipeline = id ? await findPipeline(id) : await findDefaultPipeline();
  if (!pipeline) {
    if (id) throw new NotFoundError(`No pipeline ${id}.`);
    throw new ServiceUnavailableError('No default pipeline is configured (migrations not applied?).');
  }
  return pipeline;
}

export async function createPipeline(input: PipelineInput): Promise<Pipeline> {
  try {
    return await getPipeline(await insertPipeline(input));
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError('A pipeline with this name already exists.', [{ path: 'body.name', message: 'is already used' }]);
    throw err;
  }
}

/** The spec's crm_get_pipeline_summary of a pipeline (default: the default pipeline). */
export async function getPipelineSummary(id?: string): Promise<PipelineSummary> {
  const pipeline = await getPipeline(id);
  return (await pipelineSummary(pipeline.id))!;
}
