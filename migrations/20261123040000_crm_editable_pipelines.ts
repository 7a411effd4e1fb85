// Why: editable pipelines (opportunities remember whether their probability is the stage default, so stage probability changes reach them) and a history that also records lead creations, resubmissions and probability changes, with their details.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('crm_opportunities', (t) => {
    t.boolean('probability_is_default').notNullable().defaultTo(true);
  });
  await knex.raw(`update crm_opportunities o set probability_is_default = (o.probability = s.probability)
                    from crm_pipeline_stages s where s.id = o.stage_id`);

  await knex.raw('alter table crm_history drop constraint crm_history_kinds');
  await knex.schema.alterTable('crm_history', (t) => {
    t.string('to_value', 200).alter();
    t.string('from_value', 200).alter();
    // What a resubmission brought (source, filled fields, differing values); null for plain changes.
    t.jsonb('detail');
  });
  await knex.raw(`alter table crm_history add constraint crm_history_kinds check ((entity_type, field) in (
    ('lead', 'status'), ('lead', 'created'), ('lead', 'resubmission'),
    ('opportunity', 'stage'), ('opportunity', 'probability'),
    ('stage', 'probability')))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table crm_history drop constraint crm_history_kinds');
  await knex('crm_history').whereNot((w) => w.where({ entity_type: 'lead', field: 'status' }).orWhere({ entity_type: 'opportunity', field: 'stage' })).delete();
  await knex.schema.alterTable('crm_history', (t) => t.dropColumn('detail'));
  await knex.raw(`alter table crm_history add constraint crm_history_kinds check ((entity_type, field) in (('lead', 'status'), ('opportunity', 'stage')))`);
  await knex.schema.alterTable('crm_opportunities', (t) => t.dropColumn('probability_is_default'));
}
