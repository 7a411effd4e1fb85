// Why: the SMS, Slack, email and voice channels record every provider message they receive or send
// (one row per provider id, so a provider's repeated delivery is stored once; one reply per inbound
// message, so a retried job sends it once), in one table for every channel behind the channel contract.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table channel_messages (
      message_id uuid primary key default gen_random_uuid(),
      channel varchar(50) not null check (channel ~ '^[a-z][a-z0-9_-]{0,49}$'),
      direction varchar(10) not null check (direction in ('inbound', 'outbound')),
      provider_message_id varchar(255),
      remote_address varchar(320) not null,
      local_address varchar(320),
      thread_ref varchar(998),
      user_id uuid references users(user_id) on delete cascade,
      session_id uuid references sessions(session_id) on delete set null,
      interaction_id uuid references session_interactions(interaction_id) on delete set null,
      body text,
      status varchar(20) not null,
      reply_to uuid references channel_messages(message_id) on delete cascade,
      attempts int not null default 0,
      error text,
      payload jsonb,
      metadata jsonb not null default '{}',
      send_started_at timestamptz,
      sent_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);
  await knex.raw(`create unique index channel_messages_inbound_once on channel_messages (channel, provider_message_id) where direction = 'inbound' and provider_message_id is not null`);
  await knex.raw('create unique index channel_messages_reply_once on channel_messages (reply_to) where reply_to is not null');
  await knex.raw('create index channel_messages_user on channel_messages (user_id, created_at desc)');
  await knex.raw('create index channel_messages_remote on channel_messages (channel, remote_address, created_at desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table channel_messages');
}
