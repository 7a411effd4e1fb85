// Why: a tool that changes data runs only on the person's yes (issue 39 point 8). The assistant's
// request waits here until the person's next message in the session answers it.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tool_confirmations', (t) => {
    t.uuid('confirmation_id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('session_id').notNullable().references('session_id').inTable('sessions').onDelete('CASCADE');
    t.text('tool_name').notNullable();
    t.jsonb('arguments').notNullable();
    // What will happen, in the words the person was asked.
    t.text('summary').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    // The journal key of the turn that asked: a retry of that turn does not take its own question for the answer.
    t.text('turn_key');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('answered_at', { useTz: true });
    t.index(['session_id', 'status']);
  });
  await knex.raw(`alter table tool_confirmations add constraint tool_confirmations_status check (status in ('pending', 'confirmed', 'declined', 'dropped'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('tool_confirmations');
}
