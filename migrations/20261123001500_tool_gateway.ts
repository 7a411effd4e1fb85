// Why: the tool gateway audits every call (who, tool, executor, outcome, duration, input digest) and keeps agent delegation runs (answer, tool results recorded for idempotent retries).
import type { Knex } from 'knex';
import { timestamps, updatedAtTrigger } from '../shared/db/timestamps.js';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tool_calls', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('tool').notNullable();
    t.text('executor').notNullable();
    t.text('caller_kind').notNullable().checkIn(['api_key', 'agent', 'stdio']);
    t.text('caller_id').notNullable();
    t.text('outcome').notNullable().checkIn(['ok', 'invalid_input', 'error', 'timeout', 'too_large', 'unknown_tool']);
    t.text('error');
    t.integer('duration_ms').notNullable();
    // Inputs may hold personal data: only their SHA-256 digest is kept.
    t.specificType('input_sha256', 'char(64)').notNullable();
    t.integer('result_bytes');
    timestamps(t, knex);
    t.index(['created_at']);
    t.index(['tool', 'created_at']);
  });
  await updatedAtTrigger(knex, 'tool_calls');

  await knex.schema.createTable('agent_delegation_runs', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.user_id').onDelete('cascade');
    t.uuid('session_id').notNullable().references('sessions.session_id').onDelete('cascade');
    t.uuid('interaction_id').notNullable();
    t.text('task').notNullable();
    t.text('status').notNullable().defaultTo('queued').checkIn(['queued', 'running', 'completed', 'failed']);
    t.text('answer');
    t.text('error');
    // Tool results already obtained, by call key: a retried run replays them instead of calling again.
    t.jsonb('tool_results').notNullable().defaultTo('{}');
    t.text('requested_by').notNullable();
    t.timestamp('finished_at', { useTz: true });
    timestamps(t, knex);
  });
  await updatedAtTrigger(knex, 'agent_delegation_runs');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('agent_delegation_runs');
  await knex.schema.dropTableIfExists('tool_calls');
}
