// Why: a Slack user is the platform user they confirmed while signed in, not whoever has the email
// their Slack profile shows (any workspace can show any email). A link request is what the bot hands
// an unlinked Slack user: a short-lived token, kept as a hash, that a signed-in person confirms.
import type { Knex } from 'knex';
import { timestamps } from '../shared/db/timestamps.js';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('slack_links', (t) => {
    t.text('team_id').notNullable();
    t.text('slack_user_id').notNullable();
    t.uuid('user_id').notNullable().references('user_id').inTable('users').onDelete('CASCADE');
    t.primary(['team_id', 'slack_user_id']);
    t.index(['user_id']);
    timestamps(t, knex);
  });
  await knex.schema.createTable('slack_link_requests', (t) => {
    // SHA-256 of the token in the link; the token itself is never stored.
    t.text('token_hash').primary();
    t.text('team_id').notNullable();
    t.text('slack_user_id').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['team_id', 'slack_user_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('slack_link_requests');
  await knex.schema.dropTableIfExists('slack_links');
}
