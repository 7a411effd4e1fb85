/** The pipeline aggregate's store: crm_pipelines and crm_pipeline_stages (a pipeline is read with its ordered stages). */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import type { Pipeline, PipelineInput, PipelineSummary } from './crm.schemas.js';

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
 * opportunities, Σ amount, Σ amount × probability / 100 (each opportunity's own probability), the
 * stage's probability and whether it is open or closed (won at 100 %, lost at 0 %). Totals count
 * the open stages only, so a closed deal is never pipeline; closed ones are summed apart as won and
 * lost. Amounts are rounded to cents once, after summing.
 */
export async function pipelineSummary(pipelineId: string, k: Knex = db()): Promise<PipelineSummary | undefined> {
  const { rows } = await k.raw(
    `with per_stage as (
       select s.name, s.position, s.probability,
              case s.probability when 100 then 'won' when 0 then 'lost' else 'open' end as state,
              count(o.id)::int as count,
              coalesce(sum(o.amount), 0) as value,
              coalesce(sum(o.amount * o.probability / 100.0), 0) as weighted_value
         from ${STAGES} s
         left join crm_opportunities o on o.stage_id = s.id
        where s.pipeline_id = :id
        group by s.id
     ), closed as (
       select state, coalesce(sum(count), 0)::int as count, round(coalesce(sum(value), 0), 2) as value
         from per_stage where state <> 'open' group by state
     )
     select json_build_object(
              'pipeline_id', p.id,
              'stages', coalesce((select json_object_agg(name, json_build_object(
                          'count', count, 'value', round(value, 2), 'weighted_value', round(weighted_value, 2), 'probability', probability, 'state', state
                        ) order by position) from per_stage), '{}'::json),
              'totals', (select json_build_object(
                          'opportunities', coalesce(sum(count), 0)::int,
                          'pipeline_value', round(coalesce(sum(value), 0), 2),
                          'weighted_value', round(coalesce(sum(weighted_value), 0), 2),
                          'won', coalesce((select json_build_object('count', count, 'value', value) from closed where state = 'won'), json_build_object('count', 0, 'value', 0)),
                          'lost', coalesce((select json_build_object('count', count, 'value', value) from closed where state = 'lost'), json_build_object('count', 0, 'value', 0))
                        ) from per_stage where state = 'open')
            ) as summary
       from ${PIPELINES} p
      where p.id = :id`,
    { id: pipelineId },
  );
  return rows[0]?.summary;
}

/** Locks a pipeline row, so concurrent stage edits of one pipeline run one after another. */
export async function lockPipeline(k: Knex, id: string): Promise<boolean> {
  return Boolean(await k(PIPELINES).where({ id }).forUpdate().first('id'));
}

export async function updatePipelineName(id: string, name: string, k: Knex = db()): Promise<void> {
  await k(PIPELINES).where({ id }).update({ name });
}

/** Makes this pipeline the default one (two statements: the partial unique index allows one default at any time). */
export async function makeDefaultPipeline(k: Knex, id: string): Promise<void> {
  await k(PIPELINES).where({ is_default: true }).whereNot({ id }).update({ is_default: false });
  await k(PIPELINES).where({ id }).update({ is_default: true });
}

/**
 * Gives a pipeline's stages the positions 1..n in this order. Positions are first negated, because
 * (pipeline_id, position) is unique and checked row by row.
 */
export async function renumberStages(k: Knex, pipelineId: string, orderedIds: string[]): Promise<void> {
  await k(STAGES).where({ pipeline_id: pipelineId }).update({ position: k.raw('-position') });
  await k.raw(
    `update ${STAGES} s set position = o.n
       from unnest(?::uuid[]) with ordinality as o(id, n)
      where s.id = o.id and s.pipeline_id = ?`,
    [orderedIds, pipelineId],
  );
}

/** Inserts a stage at the end (the caller renumbers to place it elsewhere); returns its id. */
export async function insertStage(k: Knex, pipelineId: string, stage: { name: string; probability: number }): Promise<string> {
  const [row] = await k(STAGES)
    .insert({ pipeline_id: pipelineId, name: stage.name, probability: stage.probability, position: k.raw(`(select coalesce(max(position), 0) + 1 from ${STAGES} where pipeline_id = ?)`, [pipelineId]) })
    .returning('id');
  return row.id as string;
}

export async function updateStageRecord(k: Knex, stageId: string, changes: { name?: string; probability?: number }): Promise<void> {
  const set = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
  if (Object.keys(set).length) await k(STAGES).where({ id: stageId }).update(set);
}

export async function deleteStageRecord(k: Knex, stageId: string): Promise<void> {
  await k(STAGES).where({ id: stageId }).delete();
}

/** Number of opportunities in a stage. */
export async function opportunitiesInStage(k: Knex, stageId: string): Promise<number> {
  const row = await k('crm_opportunities').where({ stage_id: stageId }).count<{ count: string }[]>('* as count').first();
  return Number(row?.count ?? 0);
}

export async function findStage(pipelineId: string, stageId: string, k: Knex = db()): Promise<StageRow | undefined> {
  return k(STAGES).where({ pipeline_id: pipelineId, id: stageId }).first();
}

/** Stage ids of a pipeline in order. */
export async function stageIds(k: Knex, pipelineId: string): Promise<string[]> {
  return (await k(STAGES).where({ pipeline_id: pipelineId }).orderBy('position').select('id')).map((r: { id: string }) => r.id);
}
