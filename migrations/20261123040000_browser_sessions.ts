// Browser sign-in lives in Postgres, the platform's record: a session survives a Redis restart, is
// visible to every API process, and can be ended by deleting its row. Only a hash of the cookie's
// token is stored, so a copy of the table cannot be replayed as cookies.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table auth_sessions (
      token_hash   text primary key,
      subject      text not null,
      name         text not null,
      email        text,
      roles        text[] not null default '{}',
      csrf_token   text not null,
      id_token     text,
      created_at   timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      expires_at   timestamptz not null
    );
    create index auth_sessions_expires on auth_sessions (expires_at);

    -- A sign-in in progress: what the callback must check (state, nonce, PKCE verifier), used once.
    create table auth_logins (
      state         text primary key,
      nonce         text not null,
      code_verifier text not null,
      return_to     text not null,
      created_at    timestamptz not null default now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists auth_logins; drop table if exists auth_sessions;');
}
