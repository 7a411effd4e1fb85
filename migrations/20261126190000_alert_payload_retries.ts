// Why: a sender's retry that crosses a retry-window boundary gets another payload id than its first
// attempt (webhookPayloadId). Its row is written all the same, so every payload_id the webhook answered
// can be found, and marks the attempt whose alerts counted: those alerts are not counted again.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sre_alert_payloads', (t) => {
    // No foreign key: both rows go with their source (cascade), and the insert stays one index probe.
    t.uuid('retry_of').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sre_alert_payloads', (t) => {
    t.dropColumn('retry_of');
  });
}
