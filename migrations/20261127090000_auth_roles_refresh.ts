// Why: roles are re-read from the identity provider every AUTH_ROLES_REFRESH, so a browser session
// keeps what re-reads the person (its access token, and the refresh token when the provider issues
// one, which works only with the client's secret) and when it last did.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('auth_sessions', (t) => {
    t.text('access_token');
    t.text('refresh_token');
    t.timestamp('roles_checked_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('auth_sessions', (t) => {
    t.dropColumn('access_token');
    t.dropColumn('refresh_token');
    t.dropColumn('roles_checked_at');
  });
}
