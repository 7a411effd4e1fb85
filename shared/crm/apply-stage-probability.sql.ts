/** Operation across the pipeline and opportunity aggregates and the CRM history: a stage's new default probability reaches its opportunities. */
import type { Knex } from 'knex';

/**
 * Sets the probability of the stage's opportunities that still use the stage default and records
 * each change in the history, in one statement; returns how many changed.
 */
export async function applyStageProbability(k: Knex, stageId: string, probability: number, actor: string): Promise<number> {
  const { rows } = await k.raw(
    `with changed as (
       update crm_opportunities o set probability = :p
         from crm_opportunities prev
        where o.id = prev.id and o.stage_id = :stage and o.probability_is_default and o.probability <> :p
        returning o.id, prev.probability as old
     ), recorded as (
       insert into crm_history (entity_type, entity_id, field, from_value, to_value, actor)
       select 'opportunity', id, 'probability', old::text, :p::text, :actor from changed
     )
     select count(*)::int as n from changed`,
    { p: probability, stage: stageId, actor },
  );
  return rows[0].n;
}
