// Why: a caller known only by caller ID (spoofable) gets just the portal tool set; the person's
// other rights (sales, SRE tools) on a call need a PIN they set in the portal, kept here as a hash.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    // scrypt$<salt>$<hash> (base64url); null: no PIN set, so no call gets more than the portal tools.
    t.text('voice_pin_hash');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('voice_pin_hash');
  });
}
