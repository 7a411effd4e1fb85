// Why: a phone number routes messaging-app and SMS messages to an account only once a one-time code
// sent to it has been entered; the code waiting to be entered is kept here as a hash, one per user.
import type { Knex } from 'knex';
import { timestamps, updatedAtTrigger } from '../shared/db/timestamps.js';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('phone_verifications', (t) => {
    t.uuid('verification_id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    // A new request replaces the user's previous one.
    t.uuid('user_id').notNullable().unique().references('user_id').inTable('users').onDelete('CASCADE');
    t.text('phone_number').notNullable();
    // SHA-256 of the verification id and the code; null when the number is another account's (nothing can match).
    t.text('code_hash');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    timestamps(t, knex);
  });
  await updatedAtTrigger(knex, 'phone_verifications');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('phone_verifications');
}
