// Why: keys are named, scoped and stored hashed (listed and revoked without a restart); tool calls name
// the person they acted for and record refusals; a delegated run keeps the authority of whoever asked.
import type { Knex } from 'knex';
import { timestamps, updatedAtTrigger } from '../shared/db/timestamps.js';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('api_keys', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    // Names are never reused, so `key:<name>` in an audit row names one key for good.
    t.text('name').notNullable().unique();
    // Only the SHA-256 of the key is stored; the key is shown once, when created.
    t.specificType('key_sha256', 'char(64)').notNullable().unique();
    t.specificType('scopes', 'text[]').notNullable();
    t.text('created_by').notNullable();
    t.timestamp('revoked_at', { useTz: true });
    timestamps(t, knex);
  });
  await updatedAtTrigger(knex, 'api_keys');

  await knex.raw('alter table tool_calls drop constraint tool_calls_caller_kind_check');
  await knex.raw("alter table tool_calls add constraint tool_calls_caller_kind_check check (caller_kind in ('api_key', 'agent', 'stdio', 'person'))");
  await knex.raw('alter table tool_calls drop constraint tool_calls_outcome_check');
  await knex.raw("alter table tool_calls add constraint tool_calls_outcome_check check (outcome in ('ok', 'invalid_input', 'error', 'timeout', 'too_large', 'unknown_tool', 'forbidden'))");
  await knex.schema.alterTable('tool_calls', (t) => {
    // The person the call acted for (their own call, or the agent serving them); no foreign key: the audit outlives the user.
    t.uuid('user_id');
  });
  // Abandoned sign-ins are deleted by age at each sign-in start.
  await knex.raw('create index auth_logins_created_at on auth_logins (created_at)');
  await knex.schema.alterTable('agent_delegation_runs', (t) => {
    // With whose rights the delegated agent works (see shared/auth/scopes.ts Authority).
    t.jsonb('authority').notNullable().defaultTo(JSON.stringify({ kind: 'none' }));
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists auth_logins_created_at');
  await knex.schema.alterTable('agent_delegation_runs', (t) => t.dropColumn('authority'));
  await knex.schema.alterTable('tool_calls', (t) => t.dropColumn('user_id'));
  await knex.raw("delete from tool_calls where caller_kind = 'person' or outcome = 'forbidden'");
  await knex.raw('alter table tool_calls drop constraint tool_calls_outcome_check');
  await knex.raw("alter table tool_calls add constraint tool_calls_outcome_check check (outcome in ('ok', 'invalid_input', 'error', 'timeout', 'too_large', 'unknown_tool'))");
  await knex.raw('alter table tool_calls drop constraint tool_calls_caller_kind_check');
  await knex.raw("alter table tool_calls add constraint tool_calls_caller_kind_check check (caller_kind in ('api_key', 'agent', 'stdio'))");
  await knex.schema.dropTableIfExists('api_keys');
}
