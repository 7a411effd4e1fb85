// Why: erasing a user deletes their sessions, messages, events, consents and messaging-app records; this audit row, without personal data, records that it happened.
import type { Knex } from 'knex';
import { timestamps, updatedAtTrigger } from '../shared/db/timestamps.js';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('user_erasures', (t) => {
    t.uuid('erasure_id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    // SHA-256 of the erased user id: answers "was this user erased?" for whoever still knows the id, names no one.
    t.string('subject_hash', 64).notNullable().unique();
    t.string('requested_by', 200).notNullable();
    // Rows erased per table.
    t.jsonb('erased').notNullable();
    t.timestamp('erased_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    timestamps(t, knex);
  });
  await updatedAtTrigger(knex, 'user_erasures');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('user_erasures');
}
