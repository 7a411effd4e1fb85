/** Queries of crm_pipelines and crm_pipeline_stages (a pipeline is read with its ordered stages). */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import type { Pipeline, PipelineInput, PipelineSummary } from './schemas.js';

const PIPELINES = 'crm_pipelines';
const STAGES = 'crm_pipeline_stages';

export interface StageRow {
  id: string;
  pipeline_id: string;
  name: string;
  position: number;
  probability: number;
}

interface PipelineRow {
  id: string;
  name: string;
  is_default: boolean;
  stages: Array<Omit<StageRow, 'pipeline_id'>>;
  created_at: Date;
  updated_at: Date;
}

const toDomain = (row: PipelineRow): Pipeline => ({
  ...row,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

function withStages(k: Knex) {
  return k(`${PIPELINES} as p`).select(
    'p.id',
    'p.name',
    'p.is_default',
    'p.created_at',
    'p.updated_at',
    k.raw(`coalesce((select json_agg(json_build_object('id', s.id, 'name', s.name, 'position', s.position, 'probability', s.probability) order by s.position)
      from ${STAGES} s where s.pipeline_id = p.id), '[]'::json) as stages`),
  );
}

export async function listPipelines(k: Knex = db()): Promise<Pipeline[]> {
  const rows = (await withStages(k).orderBy([{ column: 'p.is_default', order: 'desc' }, { column: 'p.name' }])) as PipelineRow[];
  return rows.map(toDomain);
}

export async function findPipeline(id: string, k: Knex = db()): Promise<Pipeline | undefined> {
  const row = (await withStages(k).where('p.id', id).first()) as PipelineRow | undefined;
  return row && toDomain(row);
}

export async function findDefaultPipeline(k: Knex = db()): Promise<Pipeline | undefined> {
  const row = (await withStages(k).where('p.is_default', true).first()) as PipelineRow | undefined;
  return row && toDomain(row);
}

/** Inserts a pipeline and its stages (positions follow the given order). */
export async function insertPipeline(input: PipelineInput, k: Knex = db()): Promise<string> {
  return k.transaction(async (trx) => {
    const [row] = await trx(PIPELINES).insert({ name: input.name }).returning('id');
    await trx(STAGES).insert(input.stages.map((s, i) => ({ pipeline_id: row.id, name: s.name, position: i + 1, probability: s.probability })));
    return row.id as string;
  });
}

/** The stage of a pipeline with this name (case-insensitive), if any. */
export async function findStageByName(pipelineId: string, name: string, k: Knex = db()): Promise<StageRow | undefined> {
  return k(STAGES).where({ pipeline_id: pipelineId }).whereRaw('lower(name) = lower(?)', [name]).first();
}

/** The first stage (lowest position) of a pipeline. */
export async function firstStage(pipelineId: string, k: Knex = db()): Promise<StageRow | undefined> {
  return k(STAGES).where({ pipeline_id: pipelineId }).orderBy('position').first();
}

/**
 * The spec's crm_get_pipeline_summary, computed by one SQL statement: per stage the number of
 * opportunities, Σ amount, Σ amount × probability / 100 (each opportunity's own probability) and the
 * stage's probability; totals over every stage. Amounts are rounded to cents once, after summing.
 */
export async function pipelineSummary(pipelineId: string, k: Knex = db()): Promise<PipelineSummary | undefined> {
  const { rows } = await k.raw(
    `with per_stage as (
       select s.name, s.position, s.probability,
              count(o.id)::int as count,
              coalesce(sum(o.amount), 0) as value,
              coalesce(sum(o.amount * o.probability / 100.0), 0) as weighted_value
         from ${STAGES} s
         left join crm_opportunities o on o.stage_id = s.id
        where s.pipeline_id = :id
        group by s.id
     )
     select json_build_object(
              'pipeline_id', p.id,
              'stages', coalesce((select json_object_agg(name, json_build_object(
                          'count', count, 'value', round(value, 2), 'weighted_value', round(weighted_value, 2), 'probability', probability
                        ) order by position) from per_stage), '{}'::json),
              'totals', (select json_build_object(
                          'opportunities', coalesce(sum(count), 0)::int,
                          'pipeline_value', round(coalesce(sum(value), 0), 2),
                          'weighted_value', round(coalesce(sum(weighted_value), 0), 2)) from per_stage)
            ) as summary
       from ${PIPELINES} p
      where p.id = :id`,
    { id: pipelineId },
  );
  return rows[0]?.summary;
}
