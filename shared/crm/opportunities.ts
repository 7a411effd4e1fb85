/**
 * Opportunities: the stage must belong to the opportunity's pipeline (else a 400 listing the valid
 * stages), probability defaults to the stage's, and every stage change is recorded. Any stage may
 * follow any other (deals can move back, and closed ones can be reopened).
 */
import { db } from '../db/index.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { findAccount } from './account.store.js';
import { publishCrmEvent } from './events.js';
import { recordChange } from './history.store.js';
import { deleteOpportunity as deleteRow, findOpportunity, insertOpportunity, updateOpportunityRecord, type OpportunityRecord } from './opportunity.store.js';
import { findDefaultPipeline, findPipeline } from './pipeline.store.js';
import type { Opportunity, OpportunityInput, OpportunityUpdate, Pipeline } from './crm.schemas.js';
import type { Knex } from 'knex';

export async function getOpportunity(id: string, k?: Knex): Promise<Opportunity> {
  const found = await findOpportunity(id, k);
  if (!found) throw new NotFoundError(`No opportunity ${id}.`);
  const { stage_id: _stage, ...opportunity } = found;
  return opportunity;
}

async function resolvePipeline(id: string | undefined, k: Knex): Promise<Pipeline> {
  const pipeline = id ? await findPipeline(id, k) : await findDefaultPipeline(k);
  if (!pipeline) throw new ValidationError('The pipeline does not exist.', [{ path: 'body.pipeline_id', message: 'is not a pipeline' }]);
  return pipeline;
}

/** The pipeline's stage of this name (case-insensitive); a 400 listing the valid stages otherwise. */
export function stageOf(pipeline: Pipeline, name: string | undefined) {
  const stage = name === undefined ? pipeline.stages[0] : pipeline.stages.find((s) => s.name.toLowerCase() === name.toLowerCase());
  if (!stage) {
    const valid = pipeline.stages.map((s) => s.name);
    throw new ValidationError(`Stage "${name}" is not a stage of pipeline ${pipeline.name}; valid stages: ${valid.join(', ')}.`, [
      { path: 'body.stage', message: `must be one of: ${valid.join(', ')}` },
    ], { valid_stages: valid });
  }
  return stage;
}

async function assertAccount(id: string | null | undefined, k: Knex): Promise<void> {
  if (id && !(await findAccount(id, k))) throw new ValidationError('The account does not exist.', [{ path: 'body.account_id', message: 'is not an account' }]);
}

export async function createOpportunity(input: OpportunityInput, actor: string): Promise<Opportunity> {
  const id = await db().transaction(async (trx) => {
    const pipeline = await resolvePipeline(input.pipeline_id, trx);
    const stage = stageOf(pipeline, input.stage);
    await assertAccount(input.account_id, trx);
    const id = await insertOpportunity(
      {
        name: input.name,
        account_id: input.account_id ?? null,
        pipeline_id: pipeline.id,
        stage_id: stage.id,
        amount: input.amount ?? 0,
        close_date: input.close_date ?? null,
        probability: input.probability ?? stage.probability,
        probability_is_default: input.probability === undefined,
      },
      trx,
    );
    await recordChange({ kind: { entity_type: 'opportunity', field: 'stage' }, entity_id: id, from: null, to: stage.name, actor }, trx);
    return id;
  });
  publishCrmEvent('opportunity.changed', { id, change: 'created', by: actor });
  return getOpportunity(id);
}

/**
 * Updates an opportunity. A new stage without a probability takes the stage's probability; moving to
 * another pipeline needs a stage of that pipeline.
 */
export async function updateOpportunity(id: string, changes: OpportunityUpdate, actor: string): Promise<Opportunity> {
  await db().transaction(async (trx) => {
    // Lock first, then read: the recorded "from" stage is the one this update replaces.
    await trx('crm_opportunities').where({ id }).forUpdate().first('id');
    const current = await findOpportunity(id, trx);
    if (!current) throw new NotFoundError(`No opportunity ${id}.`);
    const record: Partial<OpportunityRecord> = {};
    const pipelineChanges = changes.pipeline_id !== undefined && changes.pipeline_id !== current.pipeline_id;
    if (pipelineChanges && changes.stage === undefined) {
      throw new ValidationError('Moving to another pipeline needs a stage of that pipeline.', [{ path: 'body.stage', message: 'is required when pipeline_id changes' }]);
    }
    if (changes.stage !== undefined || pipelineChanges) {
      const pipeline = await resolvePipeline(changes.pipeline_id ?? current.pipeline_id, trx);
      const stage = stageOf(pipeline, changes.stage);
      if (stage.id !== current.stage_id) {
        record.pipeline_id = pipeline.id;
        record.stage_id = stage.id;
        record.probability = stage.probability;
        record.probability_is_default = true;
        await recordChange({ kind: { entity_type: 'opportunity', field: 'stage' }, entity_id: id, from: current.stage, to: stage.name, actor }, trx);
      }
    }
    if (changes.account_id !== undefined) {
      await assertAccount(changes.account_id, trx);
      record.account_id = changes.account_id;
    }
    if (changes.name !== undefined) record.name = changes.name;
    if (changes.amount !== undefined) record.amount = changes.amount;
    if (changes.close_date !== undefined) record.close_date = changes.close_date;
    if (changes.probability !== undefined) {
      record.probability = changes.probability;
      record.probability_is_default = false;
    }
    await updateOpportunityRecord(id, record, trx);
  });
  publishCrmEvent('opportunity.changed', { id, change: 'updated', by: actor });
  return getOpportunity(id);
}

export async function deleteOpportunity(id: string): Promise<void> {
  if (!(await deleteRow(id))) throw new NotFoundError(`No opportunity ${id}.`);
  publishCrmEvent('opportunity.changed', { id, change: 'deleted' });
}
