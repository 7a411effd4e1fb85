// Why: a question the person left unanswered must not run the change hours later
// (CONFIRMATION_TTL_SECONDS); one answered after that time is recorded as expired.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table tool_confirmations drop constraint tool_confirmations_status`);
  await knex.raw(`alter table tool_confirmations add constraint tool_confirmations_status check (status in ('pending', 'confirmed', 'declined', 'dropped', 'expired'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`update tool_confirmations set status = 'dropped' where status = 'expired'`);
  await knex.raw(`alter table tool_confirmations drop constraint tool_confirmations_status`);
  await knex.raw(`alter table tool_confirmations add constraint tool_confirmations_status check (status in ('pending', 'confirmed', 'declined', 'dropped'))`);
}
