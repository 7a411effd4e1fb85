/** Operation across the pipeline and opportunity aggregates and the CRM history: a removed stage's opportunities move to another stage. */
import type { Knex } from 'knex';
import type { StageRow } from './pipeline.store.js';

/**
 * Moves every opportunity of one stage to another (same pipeline), in one statement: opportunities
 * using the stage default take the target's probability; each move is recorded as a stage change.
 */
export async function moveStageOpportunities(k: Knex, from: StageRow, to: StageRow, actor: string): Promise<number> {
  const { rows } = await k.raw(
    `with moved as (
       update crm_opportunities o
          set stage_id = :to, probability = case when o.probability_is_default then :p else o.probability end
        where o.stage_id = :from
        returning o.id
     ), recorded as (
       insert into crm_history (entity_type, entity_id, field, from_value, to_value, actor)
       select 'opportunity', id, 'stage', :fromName, :toName, :actor from moved
     )
     select count(*)::int as n from moved`,
    { to: to.id, from: from.id, p: to.probability, fromName: from.name, toName: to.name, actor },
  );
  return rows[0].n;
}
