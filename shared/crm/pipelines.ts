/** Pipelines with their ordered stages, and the forecast summary. */
import type { Knex } from 'knex';
import { db, isUniqueViolation } from '../db/index.js';
import { ConflictError, NotFoundError, ServiceUnavailableError, ValidationError } from '../errors.js';
import { recordChange } from './history.store.js';
import {
  deleteStageRecord, findDefaultPipeline, findPipeline, findStage, insertPipeline, insertStage, lockPipeline, makeDefaultPipeline,
  opportunitiesInStage, pipelineSummary, renumberStages, stageIds, updatePipelineName, updateStageRecord, type StageRow,
} from './pipeline.store.js';
import { applyStageProbability } from './apply-stage-probability.sql.js';
import { moveStageOpportunities } from './move-stage-opportunities.sql.js';
import type { Pipeline, PipelineInput, PipelineSummary, PipelineUpdate, StageInput, StageUpdate } from './crm.schemas.js';

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

const stageNameTaken = () => new ConflictError('The pipeline already has a stage with this name.', [{ path: 'body.name', message: 'is already used in this pipeline' }]);

/** Runs a stage edit with the pipeline locked; a 404 for an unknown pipeline, a 409 for a duplicate stage name. */
async function editPipeline(pipelineId: string, edit: (trx: Knex.Transaction) => Promise<void>): Promise<Pipeline> {
  try {
    await db().transaction(async (trx) => {
      if (!(await lockPipeline(trx, pipelineId))) throw new NotFoundError(`No pipeline ${pipelineId}.`);
      await edit(trx);
    });
  } catch (err) {
    if (isUniqueViolation(err, 'crm_pipelines_name_unique')) throw new ConflictError('A pipeline with this name already exists.', [{ path: 'body.name', message: 'is already used' }]);
    if (isUniqueViolation(err, 'crm_pipeline_stages_pipeline_id_name_unique')) throw stageNameTaken();
    throw err;
  }
  return getPipeline(pipelineId);
}

/** Renames a pipeline and/or makes it the default one (the previous default stops being it). */
export function updatePipeline(id: string, changes: PipelineUpdate): Promise<Pipeline> {
  return editPipeline(id, async (trx) => {
    if (changes.name !== undefined) await updatePipelineName(id, changes.name, trx);
    if (changes.is_default) await makeDefaultPipeline(trx, id);
  });
}

/** Moves a stage to a 1-based position (the others keep their relative order). */
async function placeStage(pipelineId: string, stageId: string, position: number, trx: Knex): Promise<void> {
  const ids = (await stageIds(trx, pipelineId)).filter((id) => id !== stageId);
  if (position > ids.length + 1) {
    throw new ValidationError(`The pipeline has ${ids.length + 1} positions for this stage.`, [{ path: 'body.position', message: `must be between 1 and ${ids.length + 1}` }]);
  }
  ids.splice(position - 1, 0, stageId);
  await renumberStages(trx, pipelineId, ids);
}

async function stageOrNotFound(pipelineId: string, stageId: string, trx: Knex): Promise<StageRow> {
  const stage = await findStage(pipelineId, stageId, trx);
  if (!stage) throw new NotFoundError(`Pipeline ${pipelineId} has no stage ${stageId}.`);
  return stage;
}

/** Adds a stage, after the last one unless a position is given. */
export function addStage(pipelineId: string, input: StageInput): Promise<Pipeline> {
  return editPipeline(pipelineId, async (trx) => {
    const id = await insertStage(trx, pipelineId, input);
    if (input.position !== undefined) await placeStage(pipelineId, id, input.position, trx);
  });
}

/**
 * Renames, moves or re-weights a stage. A new probability reaches the stage's opportunities that
 * still use the stage default (never one whose probability was set by hand), each change recorded
 * in the opportunity's history, and the stage's own change in the stage's history.
 */
export function updateStage(pipelineId: string, stageId: string, changes: StageUpdate, actor: string): Promise<Pipeline> {
  return editPipeline(pipelineId, async (trx) => {
    const stage = await stageOrNotFound(pipelineId, stageId, trx);
    await updateStageRecord(trx, stageId, { name: changes.name, probability: changes.probability });
    if (changes.probability !== undefined && changes.probability !== stage.probability) {
      const updated = await applyStageProbability(trx, stageId, changes.probability, actor);
      await recordChange({
        kind: { entity_type: 'stage', field: 'probability' },
        entity_id: stageId,
        from: String(stage.probability),
        to: String(changes.probability),
        actor,
        detail: { opportunities_updated: updated },
      }, trx);
    }
    if (changes.position !== undefined) await placeStage(pipelineId, stageId, changes.position, trx);
  });
}

/**
 * Deletes a stage. A stage holding opportunities (of any state: the pipeline has no notion of
 * "closed" beyond stage names, and every opportunity needs a stage) needs a target stage of the same
 * pipeline; they move there, each move recorded. Without one: 409 naming the count. The last stage
 * of a pipeline cannot be deleted.
 */
export function deleteStage(pipelineId: string, stageId: string, moveTo: string | undefined, actor: string): Promise<Pipeline> {
  return editPipeline(pipelineId, async (trx) => {
    const stage = await stageOrNotFound(pipelineId, stageId, trx);
    const ids = await stageIds(trx, pipelineId);
    if (ids.length === 1) throw new ConflictError('A pipeline keeps at least one stage.', [], { stage_count: 1 });
    const count = await opportunitiesInStage(trx, stageId);
    if (count > 0) {
      if (!moveTo) {
        throw new ConflictError(`The stage "${stage.name}" holds ${count} opportunities; give move_to (a stage id of this pipeline) to move them.`, [
          { path: 'query.move_to', message: `is required: ${count} opportunities are in this stage` },
        ], { opportunity_count: count });
      }
      if (moveTo === stageId) throw new ValidationError('The target is the stage being deleted.', [{ path: 'query.move_to', message: 'must be another stage' }]);
      const target = await findStage(pipelineId, moveTo, trx);
      if (!target) throw new ValidationError('The target stage is not a stage of this pipeline.', [{ path: 'query.move_to', message: 'is not a stage of this pipeline' }]);
      await moveStageOpportunities(trx, stage, target, actor);
    }
    await deleteStageRecord(trx, stageId);
    await renumberStages(trx, pipelineId, ids.filter((id) => id !== stageId));
  });
}
