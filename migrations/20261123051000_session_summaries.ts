// Why: the portal's history (spec 002) shows each session's channel and summary, and channels are
// not limited to the six spec 000 lists as used (it names web and siri elsewhere): any lowercase
// name up to 50 characters. The summary is written when a session goes idle or closes.
import type { Knex } from 'knex';

const channelName = `'^[a-z][a-z0-9_-]{0,49}$'`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table session_interactions drop constraint session_interactions_channel_valid');
  await knex.raw(`alter table session_interactions add constraint session_interactions_channel_valid check (channel ~ ${channelName})`);
  await knex.raw('alter table channel_consents drop constraint channel_consents_channel_valid');
  await knex.raw(`alter table channel_consents add constraint channel_consents_channel_valid check (channel_type ~ ${channelName})`);
  await knex.schema.alterTable('sessions', (t) => {
    t.text('summary');
  });
}

export async function down(knex: Knex): Promise<void> {
  const channels = `('voice','chat','sms','slack','email','chatapp')`;
  await knex.schema.alterTable('sessions', (t) => t.dropColumn('summary'));
  await knex.raw('alter table session_interactions drop constraint session_interactions_channel_valid');
  await knex.raw(`alter table session_interactions add constraint session_interactions_channel_valid check (channel in ${channels})`);
  await knex.raw('alter table channel_consents drop constraint channel_consents_channel_valid');
  await knex.raw(`alter table channel_consents add constraint channel_consents_channel_valid check (channel_type in ${channels})`);
}
