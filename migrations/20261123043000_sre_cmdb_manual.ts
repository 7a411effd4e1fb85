// Why: entities and relationships recorded by hand (origin `manual`, no discovery source, never marked stale), and discovery sources that can be deleted.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sre_entities', (t) => {
    t.uuid('source_id').nullable().alter();
    t.text('origin').notNullable().defaultTo('discovery');
  });
  await knex.raw(`alter table sre_entities add constraint sre_entities_origin check (origin in ('discovery', 'manual') and (origin = 'manual') = (source_id is null))`);
  // A manual entity is one per type and key, as a discovered one is per source.
  await knex.raw(`create unique index sre_entities_manual_key on sre_entities (type, natural_key) where origin = 'manual'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex('sre_entities').where({ origin: 'manual' }).delete();
  await knex.raw('drop index sre_entities_manual_key');
  await knex.raw('alter table sre_entities drop constraint sre_entities_origin');
  await knex.schema.alterTable('sre_entities', (t) => {
    t.dropColumn('origin');
    t.uuid('source_id').notNullable().alter();
  });
}
