// Why: the CRM's tables (pipelines with ordered stages, accounts, opportunities, leads, change history, webhook deliveries) with constraints that enforce the spec's rules, and the spec's default pipeline.
import type { Knex } from 'knex';
import { timestamps, updatedAtTrigger } from '../shared/db/timestamps.js';

const defaultStages: Array<[string, number]> = [
  ['Lead', 10],
  ['Discovery', 25],
  ['Proposal', 50],
  ['Negotiation', 75],
  ['Closed Won', 100],
  ['Closed Lost', 0],
];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('crm_pipelines', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.string('name', 200).notNullable().unique();
    t.boolean('is_default').notNullable().defaultTo(false);
    timestamps(t, knex);
  });
  // At most one default pipeline.
  await knex.raw('create unique index crm_pipelines_one_default on crm_pipelines (is_default) where is_default');

  await knex.schema.createTable('crm_pipeline_stages', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('pipeline_id').notNullable().references('id').inTable('crm_pipelines').onDelete('CASCADE');
    t.string('name', 100).notNullable();
    t.integer('position').notNullable();
    t.integer('probability').notNullable();
    timestamps(t, knex);
    t.unique(['pipeline_id', 'name']);
    t.unique(['pipeline_id', 'position']);
    // Target of the opportunities' composite foreign key: a stage is only valid within its own pipeline.
    t.unique(['pipeline_id', 'id']);
  });
  await knex.raw('alter table crm_pipeline_stages add constraint crm_pipeline_stages_probability_range check (probability between 0 and 100)');

  await knex.schema.createTable('crm_accounts', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.string('name', 200).notNullable();
    t.string('domain', 255);
    t.string('industry', 100);
    t.string('segment', 20);
    timestamps(t, knex);
  });
  await knex.raw(`alter table crm_accounts add constraint crm_accounts_segment_values check (segment in ('SMB', 'Mid-Market', 'Enterprise'))`);
  // One account per company name and per domain, case-insensitively (conversion reuses them).
  await knex.raw('create unique index crm_accounts_name_ci on crm_accounts (lower(name))');
  await knex.raw('create unique index crm_accounts_domain_ci on crm_accounts (lower(domain)) where domain is not null');

  await knex.schema.createTable('crm_opportunities', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.string('name', 200).notNullable();
    t.uuid('account_id').references('id').inTable('crm_accounts').onDelete('SET NULL');
    t.uuid('pipeline_id').notNullable().references('id').inTable('crm_pipelines').onDelete('RESTRICT');
    t.uuid('stage_id').notNullable();
    t.decimal('amount', 14, 2).notNullable().defaultTo(0);
    t.date('close_date');
    t.integer('probability').notNullable();
    timestamps(t, knex);
    t.foreign(['pipeline_id', 'stage_id']).references(['pipeline_id', 'id']).inTable('crm_pipeline_stages').onDelete('RESTRICT');
    t.index(['account_id']);
    t.index(['pipeline_id', 'stage_id']);
  });
  await knex.raw('alter table crm_opportunities add constraint crm_opportunities_amount_nonnegative check (amount >= 0)');
  await knex.raw('alter table crm_opportunities add constraint crm_opportunities_probability_range check (probability between 0 and 100)');

  await knex.schema.createTable('crm_leads', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.string('first_name', 100).notNullable();
    t.string('last_name', 100).notNullable();
    t.string('email', 254);
    t.string('phone', 50);
    t.string('company', 200);
    t.string('title', 200);
    t.string('status', 20).notNullable().defaultTo('new');
    t.string('source', 100);
    t.string('source_detail', 500);
    t.string('estimated_value', 50);
    t.text('notes');
    t.jsonb('custom_data').notNullable().defaultTo('{}');
    t.timestamp('converted_at', { useTz: true });
    t.uuid('converted_opportunity_id').references('id').inTable('crm_opportunities').onDelete('SET NULL');
    t.uuid('converted_account_id').references('id').inTable('crm_accounts').onDelete('SET NULL');
    timestamps(t, knex);
    t.index(['status', 'created_at']);
    t.index(['created_at']);
  });
  await knex.raw(`alter table crm_leads add constraint crm_leads_status_values check (status in ('new', 'contacted', 'qualified', 'unqualified', 'converted'))`);
  await knex.raw(`alter table crm_leads add constraint crm_leads_converted_has_time check ((status = 'converted') = (converted_at is not null))`);
  // A person is one lead: emails are unique case-insensitively (webhook duplicates are detected by this index).
  await knex.raw('create unique index crm_leads_email_ci on crm_leads (lower(email)) where email is not null');

  await knex.schema.createTable('crm_history', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.string('entity_type', 20).notNullable();
    t.uuid('entity_id').notNullable();
    t.string('field', 20).notNullable();
    t.string('from_value', 100);
    t.string('to_value', 100).notNullable();
    t.string('actor', 200).notNullable();
    timestamps(t, knex);
    t.index(['entity_type', 'entity_id', 'created_at']);
  });
  await knex.raw(`alter table crm_history add constraint crm_history_kinds check ((entity_type, field) in (('lead', 'status'), ('opportunity', 'stage')))`);

  // Webhook deliveries already processed, with the response they got: a repeated delivery id is answered from here.
  await knex.schema.createTable('crm_webhook_deliveries', (t) => {
    t.string('kind', 20).notNullable();
    t.string('delivery_id', 200).notNullable();
    t.jsonb('result').notNullable();
    timestamps(t, knex);
    // Ids are the sender's: a single-lead delivery and a batch delivery may reuse one.
    t.primary(['kind', 'delivery_id']);
  });

  for (const table of ['crm_pipelines', 'crm_pipeline_stages', 'crm_accounts', 'crm_opportunities', 'crm_leads', 'crm_history', 'crm_webhook_deliveries']) {
    await updatedAtTrigger(knex, table);
  }

  const [pipeline] = await knex('crm_pipelines').insert({ name: 'Default', is_default: true }).returning('id');
  await knex('crm_pipeline_stages').insert(
    defaultStages.map(([name, probability], i) => ({ pipeline_id: pipeline.id, name, position: i + 1, probability })),
  );
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['crm_webhook_deliveries', 'crm_history', 'crm_leads', 'crm_opportunities', 'crm_accounts', 'crm_pipeline_stages', 'crm_pipelines']) {
    await knex.schema.dropTableIfExists(table);
  }
}
