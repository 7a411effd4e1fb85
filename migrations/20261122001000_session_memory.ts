// Why: the session memory service's tables (spec 000): users, sessions with one live session per user, interactions, the audit/event log, messages, consents and messaging-app session records.
import type { Knex } from 'knex';
import { timestamps, updatedAtTrigger } from '../shared/db/timestamps.js';

const channels = `('voice','chat','sms','slack','email','chatapp')`;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.uuid('user_id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.string('display_name', 255);
    t.string('phone_number', 20).notNullable().unique();
    t.string('email', 320);
    timestamps(t, knex);
  });
  await knex.raw(`alter table users add constraint users_phone_e164 check (phone_number ~ '^\\+[1-9][0-9]{1,14}$')`);
  await updatedAtTrigger(knex, 'users');

  await knex.schema.createTable('sessions', (t) => {
    t.uuid('session_id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('user_id').inTable('users').onDelete('CASCADE');
    t.string('status', 20).notNullable().defaultTo('active');
    t.jsonb('context').notNullable().defaultTo(knex.raw(`'{}'::jsonb`));
    t.specificType('resume_window', 'interval').notNullable().defaultTo(knex.raw(`interval '24 hours'`));
    // Highest event sequence number given out in this session (the order of its event stream).
    t.bigInteger('last_seq').notNullable().defaultTo(0);
    // Messages ever appended; a message's position is its ordinal, used to trim the history.
    t.bigInteger('message_count').notNullable().defaultTo(0);
    t.timestamp('last_activity', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('closed_at', { useTz: true });
    timestamps(t, knex);
    t.index(['user_id', 'created_at']);
  });
  await knex.raw(`alter table sessions add constraint sessions_status_valid check (status in ('active','idle','resumable','closed'))`);
  await knex.raw(`alter table sessions add constraint sessions_closed_at_iff_closed check ((status = 'closed') = (closed_at is not null))`);
  // The spec's rule: at most one active, idle or resumable session per user.
  await knex.raw(`create unique index sessions_one_live_per_user on sessions (user_id) where status in ('active','idle','resumable')`);
  // The expiry sweep reads live sessions by last activity.
  await knex.raw(`create index sessions_live_by_activity on sessions (last_activity) where status <> 'closed'`);
  await updatedAtTrigger(knex, 'sessions');

  await knex.schema.createTable('session_interactions', (t) => {
    t.uuid('interaction_id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('session_id').notNullable().references('session_id').inTable('sessions').onDelete('CASCADE');
    t.string('channel', 50).notNullable();
    t.string('channel_ref', 255);
    t.string('status', 20).notNullable().defaultTo('active');
    t.timestamp('started_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('ended_at', { useTz: true });
    t.uuid('legacy_interaction_id');
    t.jsonb('metadata').notNullable().defaultTo(knex.raw(`'{}'::jsonb`));
    timestamps(t, knex);
    t.index(['session_id', 'status']);
  });
  await knex.raw(`alter table session_interactions add constraint session_interactions_channel_valid check (channel in ${channels})`);
  await knex.raw(`alter table session_interactions add constraint session_interactions_status_valid check (status in ('active','closed'))`);
  await updatedAtTrigger(knex, 'session_interactions');

  // Audit log and, for rows with a sequence, the replayable event stream of a session.
  await knex.schema.createTable('session_events', (t) => {
    t.uuid('event_id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('session_id').notNullable().references('session_id').inTable('sessions').onDelete('CASCADE');
    t.uuid('interaction_id').references('interaction_id').inTable('session_interactions').onDelete('SET NULL');
    t.string('event_type', 100).notNullable();
    t.jsonb('payload').notNullable().defaultTo(knex.raw(`'{}'::jsonb`));
    // Position in the session's event stream (SSE id) for events that were broadcast; null for audit-only rows.
    t.bigInteger('sequence');
    t.timestamp('timestamp', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    timestamps(t, knex);
    t.index(['session_id', 'timestamp']);
  });
  await knex.raw(`create unique index session_events_stream on session_events (session_id, sequence) where sequence is not null`);
  await updatedAtTrigger(knex, 'session_events');

  // The conversation history as rows (the context serves the last SERVICE_SESSION_MAX_HISTORY).
  await knex.schema.createTable('session_messages', (t) => {
    t.uuid('message_id').primary();
    t.uuid('session_id').notNullable().references('session_id').inTable('sessions').onDelete('CASCADE');
    t.uuid('interaction_id').references('interaction_id').inTable('session_interactions').onDelete('SET NULL');
    t.bigInteger('sequence').notNullable();
    t.bigInteger('position').notNullable();
    t.string('channel', 50).notNullable();
    t.string('role', 20).notNullable();
    t.text('content').notNullable();
    t.jsonb('metadata').notNullable().defaultTo(knex.raw(`'{}'::jsonb`));
    t.string('idempotency_key', 255);
    timestamps(t, knex);
    t.unique(['session_id', 'sequence']);
    t.unique(['session_id', 'position']);
    t.unique(['session_id', 'idempotency_key']);
  });
  await knex.raw(`alter table session_messages add constraint session_messages_role_valid check (role in ('user','assistant'))`);
  await updatedAtTrigger(knex, 'session_messages');

  await knex.schema.createTable('channel_consents', (t) => {
    t.uuid('consent_id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('user_id').inTable('users').onDelete('CASCADE');
    t.string('channel_type', 50).notNullable();
    t.boolean('opted_in').notNullable().defaultTo(false);
    t.timestamp('opted_in_at', { useTz: true });
    t.timestamp('opted_out_at', { useTz: true });
    t.string('consent_source', 100);
    t.boolean('proactive_allowed').notNullable().defaultTo(false);
    t.timestamp('proactive_allowed_at', { useTz: true });
    timestamps(t, knex);
    t.unique(['user_id', 'channel_type']);
  });
  await knex.raw(`alter table channel_consents add constraint channel_consents_channel_valid check (channel_type in ${channels})`);
  await updatedAtTrigger(knex, 'channel_consents');

  await knex.schema.createTable('chatapp_sessions', (t) => {
    t.uuid('session_id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('user_id').inTable('users').onDelete('CASCADE');
    t.string('phone_number', 20).notNullable().unique();
    t.timestamp('window_expires_at', { useTz: true });
    t.timestamp('last_inbound_at', { useTz: true });
    timestamps(t, knex);
  });
  await updatedAtTrigger(knex, 'chatapp_sessions');
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['chatapp_sessions', 'channel_consents', 'session_messages', 'session_events', 'session_interactions', 'sessions', 'users']) {
    await knex.schema.dropTableIfExists(table);
  }
}
