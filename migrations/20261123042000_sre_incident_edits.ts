// Why: incidents get an assignee and edits recorded on the timeline (`updated`), and a seeded rule opens incidents for critical alerts so a new installation works without configuration.
import type { Knex } from 'knex';

const kinds = ['created', 'alert_attached', 'status_changed', 'comment', 'agent_action', 'runbook_execution', 'escalation', 'ticket'];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sre_incidents', (t) => t.text('assignee'));
  await knex.raw('alter table sre_incident_timeline drop constraint if exists sre_incident_timeline_kind_check');
  await knex.raw(`alter table sre_incident_timeline add constraint sre_incident_timeline_kind_check check (kind in (${[...kinds, 'updated'].map((k) => `'${k}'`).join(', ')}))`);
  // Last in rule order (position 1000): rules an operator adds first still win; disable it with PATCH enabled=false.
  await knex('sre_incident_rules')
    .insert({ name: 'critical alerts', matchers: JSON.stringify([]), severities: knex.raw(`'{critical}'::text[]`), group_by: knex.raw(`'{alertname}'::text[]`), position: 1000, enabled: true })
    .onConflict('name')
    .ignore();
}

export async function down(knex: Knex): Promise<void> {
  await knex('sre_incident_rules').where({ name: 'critical alerts' }).delete();
  await knex('sre_incident_timeline').where({ kind: 'updated' }).delete();
  await knex.raw('alter table sre_incident_timeline drop constraint sre_incident_timeline_kind_check');
  await knex.raw(`alter table sre_incident_timeline add constraint sre_incident_timeline_kind_check check (kind in (${kinds.map((k) => `'${k}'`).join(', ')}))`);
  await knex.schema.alterTable('sre_incidents', (t) => t.dropColumn('assignee'));
}
