// Why: the SRE configuration database — entity types, entities, relationships, discovery sources and runs, recommendations and entity monitors.
import type { Knex } from 'knex';
import { timestamps, updatedAtTrigger } from '../shared/db/timestamps.js';

const tables = [
  'sre_entity_types',
  'sre_discovery_sources',
  'sre_discovery_runs',
  'sre_discovery_run_sources',
  'sre_entities',
  'sre_relationships',
  'sre_recommendations',
  'sre_entity_monitors',
];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sre_entity_types', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable().unique();
    t.text('description').notNullable().defaultTo('');
    timestamps(t, knex);
  });
  await knex('sre_entity_types').insert([
    { name: 'container', description: 'A container of the container runtime' },
    { name: 'compose_project', description: 'A compose project, from the com.docker.compose.project label' },
    { name: 'scrape_job', description: 'A scrape job (scrape pool) of the metrics system' },
    { name: 'scrape_target', description: 'A scrape target of the metrics system' },
    { name: 'router', description: 'An HTTP router of the reverse proxy' },
    { name: 'proxy_service', description: 'An HTTP service (load balancer) of the reverse proxy' },
    { name: 'hostname', description: 'A hostname named in a Host(`…`) rule of a router' },
  ]);

  await knex.schema.createTable('sre_discovery_sources', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable().unique();
    t.text('kind').notNullable().checkIn(['docker', 'prometheus', 'traefik'], 'sre_discovery_sources_kind');
    t.text('address').notNullable().checkLength('>', 0, 'sre_discovery_sources_address');
    t.boolean('enabled').notNullable().defaultTo(true);
    timestamps(t, knex);
  });

  await knex.schema.createTable('sre_discovery_runs', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('trigger').notNullable().checkIn(['schedule', 'manual'], 'sre_discovery_runs_trigger');
    // Start of the schedule slot this run belongs to; one scheduled run per slot.
    t.timestamp('slot', { useTz: true }).nullable().unique();
    t.text('status').notNullable().defaultTo('running').checkIn(['running', 'succeeded', 'partial', 'failed'], 'sre_discovery_runs_status');
    t.timestamp('started_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('finished_at', { useTz: true }).nullable();
    t.integer('added').notNullable().defaultTo(0);
    t.integer('updated').notNullable().defaultTo(0);
    t.integer('unchanged').notNullable().defaultTo(0);
    t.integer('stale').notNullable().defaultTo(0);
    // Rows of entities, relationships, recommendations and monitors this run inserted, updated or deleted.
    t.integer('rows_written').notNullable().defaultTo(0);
    // Source name → error message, for every source whose part failed.
    t.jsonb('errors').notNullable().defaultTo('{}');
    timestamps(t, knex);
    t.check('(status = ?) = (finished_at is null)', ['running'], 'sre_discovery_runs_finished');
  });
  // At most one run at a time: a trigger during a running run finds it through this index.
  await knex.raw(`create unique index sre_discovery_runs_one_running on sre_discovery_runs (status) where status = 'running'`);
  await knex.raw('create index sre_discovery_runs_started on sre_discovery_runs (started_at desc)');

  await knex.schema.createTable('sre_discovery_run_sources', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('run_id').notNullable().references('id').inTable('sre_discovery_runs').onDelete('CASCADE');
    t.uuid('source_id').notNullable().references('id').inTable('sre_discovery_sources').onDelete('CASCADE');
    t.text('status').notNullable().checkIn(['succeeded', 'failed'], 'sre_discovery_run_sources_status');
    t.timestamp('started_at', { useTz: true }).notNullable();
    t.timestamp('finished_at', { useTz: true }).notNullable();
    t.integer('seen').notNullable().defaultTo(0);
    t.integer('added').notNullable().defaultTo(0);
    t.integer('updated').notNullable().defaultTo(0);
    t.integer('unchanged').notNullable().defaultTo(0);
    t.integer('stale').notNullable().defaultTo(0);
    t.text('error').nullable();
    timestamps(t, knex);
    t.unique(['run_id', 'source_id']);
    t.check(`(status = 'failed') = (error is not null)`, [], 'sre_discovery_run_sources_error');
  });
  await knex.raw('create index sre_discovery_run_sources_latest on sre_discovery_run_sources (source_id, status, started_at desc)');

  await knex.schema.createTable('sre_entities', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('type').notNullable().references('name').inTable('sre_entity_types').onUpdate('CASCADE');
    t.uuid('source_id').notNullable().references('id').inTable('sre_discovery_sources').onDelete('CASCADE');
    t.text('natural_key').notNullable();
    t.text('name').notNullable();
    t.jsonb('attributes').notNullable().defaultTo('{}');
    t.text('health').notNullable().defaultTo('unknown').checkIn(['healthy', 'degraded', 'unhealthy', 'down', 'unknown'], 'sre_entities_health');
    t.timestamp('first_seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Written only when the row changes for another reason; readers take the latest successful run of the source for live entities.
    t.timestamp('last_seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.boolean('stale').notNullable().defaultTo(false);
    t.timestamp('stale_since', { useTz: true }).nullable();
    timestamps(t, knex);
    t.unique(['source_id', 'type', 'natural_key']);
    t.check('stale = (stale_since is not null)', [], 'sre_entities_stale_since');
  });
  await knex.raw('create index sre_entities_type on sre_entities (type, stale)');

  await knex.schema.createTable('sre_relationships', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('from_entity_id').notNullable().references('id').inTable('sre_entities').onDelete('CASCADE');
    t.uuid('to_entity_id').notNullable().references('id').inTable('sre_entities').onDelete('CASCADE');
    t.text('type').notNullable().checkIn(['part_of', 'runs_on', 'routes_to', 'scraped_by', 'depends_on'], 'sre_relationships_type');
    // Derived by discovery (replaced as discovery sees fit) or recorded by hand (kept).
    t.text('origin').notNullable().defaultTo('discovery').checkIn(['discovery', 'manual'], 'sre_relationships_origin');
    timestamps(t, knex);
    t.unique(['from_entity_id', 'to_entity_id', 'type']);
    t.check('from_entity_id <> to_entity_id', [], 'sre_relationships_not_self');
  });
  await knex.raw('create index sre_relationships_to on sre_relationships (to_entity_id)');

  await knex.schema.createTable('sre_recommendations', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('entity_id').notNullable().references('id').inTable('sre_entities').onDelete('CASCADE');
    t.text('origin').notNullable().checkIn(['template', 'llm'], 'sre_recommendations_origin');
    // Built-in template key (container_down, …) or "llm".
    t.text('template').notNullable();
    t.text('alert').notNullable();
    // The Prometheus alerting rule: { alert, expr, for, labels, annotations }.
    t.jsonb('rule').notNullable();
    t.text('rationale').notNullable().defaultTo('');
    t.text('status').notNullable().defaultTo('proposed').checkIn(['proposed', 'applied', 'dismissed'], 'sre_recommendations_status');
    timestamps(t, knex);
    t.unique(['entity_id', 'alert']);
  });

  await knex.schema.createTable('sre_entity_monitors', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('entity_id').notNullable().references('id').inTable('sre_entities').onDelete('CASCADE');
    t.uuid('recommendation_id').nullable().references('id').inTable('sre_recommendations').onDelete('SET NULL');
    t.text('alert').notNullable();
    t.jsonb('rule').notNullable();
    t.text('status').notNullable().defaultTo('pending').checkIn(['pending', 'deployed'], 'sre_entity_monitors_status');
    t.text('last_error').nullable();
    t.timestamp('deployed_at', { useTz: true }).nullable();
    timestamps(t, knex);
    t.unique(['entity_id', 'alert']);
    t.check(`(status = 'deployed') = (deployed_at is not null)`, [], 'sre_entity_monitors_deployed_at');
  });
  await knex.raw('create index sre_entity_monitors_status on sre_entity_monitors (status)');

  for (const table of tables) await updatedAtTrigger(knex, table);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [...tables].reverse()) await knex.schema.dropTableIfExists(table);
}
