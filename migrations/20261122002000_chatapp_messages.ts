// Why: every messaging-app message in and out is recorded (status, provider id, error), and a provider MessageSid is processed once.
import type { Knex } from 'knex';
import { timestamps, updatedAtTrigger } from '../shared/db/timestamps.js';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('chatapp_messages', (t) => {
    t.uuid('message_id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.string('direction', 10).notNullable();
    // Null for a number we do not know; a user's messages are removed with the user, as their sessions are.
    t.uuid('user_id').nullable().references('user_id').inTable('users').onDelete('CASCADE');
    t.uuid('session_id').nullable().references('session_id').inTable('sessions').onDelete('SET NULL');
    t.string('phone_number', 20).notNullable();
    t.string('kind', 20).notNullable();
    t.text('body').nullable();
    t.string('template_name', 100).nullable();
    t.jsonb('variables').nullable();
    t.jsonb('content').nullable();
    t.jsonb('payload').nullable();
    t.string('status', 20).notNullable();
    t.string('provider_message_id', 64).nullable();
    t.string('provider_status', 40).nullable();
    t.text('error').nullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.uuid('reply_to').nullable().references('message_id').inTable('chatapp_messages').onDelete('set null');
    t.timestamp('sent_at', { useTz: true }).nullable();
    timestamps(t, knex);
    t.index(['user_id', 'created_at']);
    t.index(['phone_number', 'created_at']);
  });
  await knex.raw(`alter table chatapp_messages
    add constraint chatapp_messages_direction_check check (direction in ('inbound', 'outbound')),
    add constraint chatapp_messages_kind_check check (kind in ('text', 'template', 'buttons', 'list')),
    add constraint chatapp_messages_status_check check (
      (direction = 'inbound' and status in ('received', 'processed'))
      or (direction = 'outbound' and status in ('queued', 'sent', 'failed'))),
    add constraint chatapp_messages_template_check check ((kind = 'template') = (template_name is not null)),
    add constraint chatapp_messages_provider_id_check check (
      (direction = 'inbound' and provider_message_id is not null)
      or (direction = 'outbound' and (status = 'sent') = (provider_message_id is not null)))`);
  // One record per provider message: a repeated webhook delivery of the same MessageSid is recognised.
  await knex.raw(`create unique index chatapp_messages_provider_id_unique on chatapp_messages (direction, provider_message_id) where provider_message_id is not null`);
  // One reply per inbound message, however often its processing is retried.
  await knex.raw(`create unique index chatapp_messages_reply_to_unique on chatapp_messages (reply_to) where reply_to is not null`);
  await updatedAtTrigger(knex, 'chatapp_messages');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('chatapp_messages');
}
