// Why: alert silences (label matchers over a time range, with author and comment): silenced alerts are recorded and shown but open no incident and run no runbook.
import type { Knex } from 'knex';
import { timestamps, updatedAtTrigger } from '../shared/db/timestamps.js';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sre_silences', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.jsonb('matchers').notNullable();
    t.timestamp('starts_at', { useTz: true }).notNullable();
    t.timestamp('ends_at', { useTz: true }).notNullable();
    t.text('created_by').notNullable();
    t.text('comment').notNullable();
    t.text('ended_by');
    timestamps(t, knex);
    // Active silences are looked up by time on every automation round and alert read.
    t.index(['ends_at', 'starts_at']);
  });
  await knex.raw('alter table sre_silences add constraint sre_silences_range check (ends_at > starts_at)');
  await updatedAtTrigger(knex, 'sre_silences');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('sre_silences');
}
