// Why: side effects happen at most once across job retries. An agent turn (web
// chat, messaging app, delegated run) records each model step and each tool call (intent before,
// result after) so a retried turn replays them instead of acting again; a messaging-app send records
// its intent (status `sending`, with the moment) before calling the provider, so a retry after a lost
// answer looks the message up first.
import type { Knex } from 'knex';
import { timestamps, updatedAtTrigger } from '../shared/db/timestamps.js';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('agent_turn_steps', (t) => {
    // The turn: `webchat:<turn_id>`, `chatapp:<inbound message id>`, `delegation:<run id>`.
    t.text('turn_key').notNullable();
    // `model:<round>` (the model's answer of a round) or a tool call key (tool, argument digest, occurrence).
    t.text('step_key').notNullable();
    // Tool arguments and results may hold personal data: they go with the session (user erasure).
    t.uuid('session_id').notNullable().references('session_id').inTable('sessions').onDelete('CASCADE');
    // started: the tool was about to run (its outcome unknown if no result follows); done: recorded.
    t.text('status').notNullable().checkIn(['started', 'done']);
    t.jsonb('data').notNullable();
    timestamps(t, knex);
    t.primary(['turn_key', 'step_key']);
    t.index(['session_id']);
    t.index(['created_at']);
  });
  await updatedAtTrigger(knex, 'agent_turn_steps');

  await knex.schema.alterTable('chatapp_messages', (t) => {
    t.timestamp('send_started_at', { useTz: true }).nullable();
  });
  await knex.raw(`alter table chatapp_messages drop constraint chatapp_messages_status_check`);
  await knex.raw(`alter table chatapp_messages add constraint chatapp_messages_status_check check (
      (direction = 'inbound' and status in ('received', 'processed'))
      or (direction = 'outbound' and status in ('queued', 'sending', 'sent', 'failed')))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`update chatapp_messages set status = 'queued' where status = 'sending'`);
  await knex.raw(`alter table chatapp_messages drop constraint chatapp_messages_status_check`);
  await knex.raw(`alter table chatapp_messages add constraint chatapp_messages_status_check check (
      (direction = 'inbound' and status in ('received', 'processed'))
      or (direction = 'outbound' and status in ('queued', 'sent', 'failed')))`);
  await knex.schema.alterTable('chatapp_messages', (t) => t.dropColumn('send_started_at'));
  await knex.schema.dropTableIfExists('agent_turn_steps');
}
