// Why: monitors can be disabled (kept, but left out of the deployed rule file) as well as removed.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table sre_entity_monitors drop constraint sre_entity_monitors_status');
  await knex.raw(`alter table sre_entity_monitors add constraint sre_entity_monitors_status check (status in ('pending', 'deployed', 'disabled'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex('sre_entity_monitors').where({ status: 'disabled' }).update({ status: 'pending' });
  await knex.raw('alter table sre_entity_monitors drop constraint sre_entity_monitors_status');
  await knex.raw(`alter table sre_entity_monitors add constraint sre_entity_monitors_status check (status in ('pending', 'deployed'))`);
}
