// Why: SRE alert ingestion (sources, deduplicated alert instances, state history), incidents with tracker links and timeline, runbooks and their executions.
import type { Knex } from 'knex';
import { timestamps, updatedAtTrigger } from '../shared/db/timestamps.js';

const tables = [
  'sre_alert_sources',
  'sre_alert_payloads',
  'sre_incident_rules',
  'sre_incidents',
  'sre_incident_issue_links',
  'sre_incident_timeline',
  'sre_alert_instances',
  'sre_alert_state_history',
  'sre_runbooks',
  'sre_runbook_executions',
  'sre_runbook_execution_history',
];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sre_alert_sources', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('kind').notNullable().checkIn(['alertmanager', 'grafana']);
    t.text('name').notNullable().checkRegex('^[a-z0-9][a-z0-9_-]{0,62}$');
    // Null: the source uses ALERT_WEBHOOK_TOKEN (and accepts anything when that is unset outside production).
    t.text('secret');
    t.boolean('enabled').notNullable().defaultTo(true);
    timestamps(t, knex);
    t.unique(['kind', 'name']);
  });
  await knex('sre_alert_sources').insert([
    { kind: 'alertmanager', name: 'default' },
    { kind: 'grafana', name: 'default' },
  ]);

  // One row per accepted webhook payload: makes a retried ingest job a no-op.
  await knex.schema.createTable('sre_alert_payloads', (t) => {
    t.uuid('id').primary();
    t.uuid('source_id').notNullable().references('sre_alert_sources.id').onDelete('cascade');
    t.integer('alert_count').notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable();
    timestamps(t, knex);
  });

  await knex.schema.createTable('sre_incident_rules', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable().unique();
    t.jsonb('matchers').notNullable().defaultTo('[]');
    t.specificType('severities', 'text[]').notNullable().defaultTo('{}');
    t.specificType('group_by', 'text[]').notNullable().defaultTo('{alertname}');
    t.text('incident_severity');
    t.integer('position').notNullable().defaultTo(100);
    t.boolean('enabled').notNullable().defaultTo(true);
    timestamps(t, knex);
  });

  await knex.schema.createTable('sre_incidents', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('title').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.text('severity').notNullable().defaultTo('warning');
    t.text('status').notNullable().defaultTo('open').checkIn(['open', 'acknowledged', 'resolved', 'closed']);
    t.text('origin').notNullable().checkIn(['manual', 'alert']);
    t.uuid('rule_id').references('sre_incident_rules.id').onDelete('set null');
    t.text('group_key');
    t.jsonb('labels').notNullable().defaultTo('{}');
    t.text('created_by').notNullable();
    t.text('tracker_status').notNullable().defaultTo('pending').checkIn(['pending', 'created', 'failed', 'disabled']);
    t.text('tracker_error');
    t.timestamp('acknowledged_at', { useTz: true });
    t.timestamp('resolved_at', { useTz: true });
    t.timestamp('closed_at', { useTz: true });
    t.timestamp('escalated_at', { useTz: true });
    timestamps(t, knex);
    t.index(['status', 'created_at']);
  });
  // Alerts with the same grouping key join the one open incident of that key.
  await knex.raw(
    `create unique index sre_incidents_open_group_key on sre_incidents (group_key) where group_key is not null and status in ('open', 'acknowledged')`,
  );

  await knex.schema.createTable('sre_incident_issue_links', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('incident_id').notNullable().unique().references('sre_incidents.id').onDelete('cascade');
    t.text('project_id').notNullable();
    t.integer('iid').notNullable();
    t.text('web_url').notNullable();
    timestamps(t, knex);
  });

  await knex.schema.createTable('sre_incident_timeline', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('incident_id').notNullable().references('sre_incidents.id').onDelete('cascade');
    t.text('kind')
      .notNullable()
      .checkIn(['created', 'alert_attached', 'status_changed', 'comment', 'agent_action', 'runbook_execution', 'escalation', 'ticket']);
    t.text('actor').notNullable();
    t.text('message').notNullable().defaultTo('');
    t.jsonb('data').notNullable().defaultTo('{}');
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    timestamps(t, knex);
    t.index(['incident_id', 'at']);
  });

  await knex.schema.createTable('sre_alert_instances', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('source_id').notNullable().references('sre_alert_sources.id').onDelete('cascade');
    t.text('fingerprint').notNullable();
    t.text('status').notNullable().checkIn(['firing', 'acknowledged', 'resolved']);
    t.text('alertname').notNullable().defaultTo('');
    t.text('severity').notNullable().defaultTo('');
    t.jsonb('labels').notNullable();
    t.jsonb('annotations').notNullable().defaultTo('{}');
    t.jsonb('values').notNullable().defaultTo('{}');
    t.text('generator_url').notNullable().defaultTo('');
    t.timestamp('starts_at', { useTz: true });
    t.timestamp('ends_at', { useTz: true });
    t.timestamp('first_received_at', { useTz: true }).notNullable();
    t.timestamp('last_received_at', { useTz: true }).notNullable();
    t.integer('occurrence_count').notNullable().defaultTo(1).checkPositive();
    t.boolean('flapping').notNullable().defaultTo(false);
    t.timestamp('acknowledged_at', { useTz: true });
    t.text('acknowledged_by');
    t.timestamp('resolved_at', { useTz: true });
    t.text('resolved_by');
    t.uuid('incident_id').references('sre_incidents.id').onDelete('set null');
    // Set once incident rules and runbooks have been considered for this instance (never while flapping).
    t.timestamp('automation_at', { useTz: true });
    timestamps(t, knex);
    // No index on the columns a repeated firing changes (last_received_at, occurrence_count, annotations,
    // values): those updates stay HOT (no index maintenance), which is what keeps dedup cheap.
    t.index(['source_id', 'fingerprint']);
    t.index(['incident_id']);
  });
  // Free space on each page so repeated-firing updates can be HOT (same page, no new index entries).
  await knex.raw('alter table sre_alert_instances set (fillfactor = 70)');
  // One open (not resolved) instance per source and fingerprint.
  await knex.raw(`create unique index sre_alert_instances_open on sre_alert_instances (source_id, fingerprint) where status <> 'resolved'`);
  await knex.raw(`create index sre_alert_instances_pending on sre_alert_instances (id) where automation_at is null and status = 'firing'`);
  await knex.raw(`create index sre_alert_instances_labels on sre_alert_instances using gin (labels jsonb_path_ops)`);

  await knex.schema.createTable('sre_alert_state_history', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('alert_id').notNullable().references('sre_alert_instances.id').onDelete('cascade');
    // Copied from the instance so flapping counts changes across the instances of one fingerprint.
    t.uuid('source_id').notNullable();
    t.text('fingerprint').notNullable();
    t.text('from_status').checkIn(['firing', 'acknowledged', 'resolved']);
    t.text('to_status').notNullable().checkIn(['firing', 'acknowledged', 'resolved']);
    t.text('actor').notNullable();
    t.text('note');
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    timestamps(t, knex);
    t.index(['alert_id', 'at']);
    t.index(['source_id', 'fingerprint', 'at']);
  });

  await knex.schema.createTable('sre_runbooks', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable().unique();
    t.text('description').notNullable().defaultTo('');
    t.jsonb('matchers').notNullable().defaultTo('[]');
    t.specificType('severities', 'text[]').notNullable().defaultTo('{}');
    t.boolean('auto_trigger').notNullable().defaultTo(true);
    t.boolean('enabled').notNullable().defaultTo(true);
    t.text('webhook_url').notNullable();
    t.text('workflow_id');
    t.jsonb('parameters').notNullable().defaultTo('{}');
    t.integer('timeout_seconds').notNullable().defaultTo(900).checkPositive();
    timestamps(t, knex);
  });

  await knex.schema.createTable('sre_runbook_executions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('runbook_id').notNullable().references('sre_runbooks.id').onDelete('cascade');
    t.uuid('alert_id').references('sre_alert_instances.id').onDelete('set null');
    t.uuid('incident_id').references('sre_incidents.id').onDelete('set null');
    t.text('trigger').notNullable().checkIn(['manual', 'alert']);
    t.text('triggered_by').notNullable();
    t.text('status').notNullable().defaultTo('queued').checkIn(['queued', 'running', 'success', 'failed', 'timed_out']);
    t.jsonb('input').notNullable().defaultTo('{}');
    t.text('external_execution_id');
    t.jsonb('result');
    t.text('error');
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    timestamps(t, knex);
    t.index(['runbook_id', 'created_at']);
    t.index(['status']);
  });
  // At most one automatic execution per runbook and alert instance.
  await knex.raw(`create unique index sre_runbook_executions_alert_once on sre_runbook_executions (runbook_id, alert_id) where trigger = 'alert'`);

  await knex.schema.createTable('sre_runbook_execution_history', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('execution_id').notNullable().references('sre_runbook_executions.id').onDelete('cascade');
    t.text('from_status');
    t.text('to_status').notNullable();
    t.text('detail');
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    timestamps(t, knex);
    t.index(['execution_id', 'at']);
  });

  for (const table of tables) await updatedAtTrigger(knex, table);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [...tables].reverse()) await knex.schema.dropTableIfExists(table);
}
