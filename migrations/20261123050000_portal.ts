// Why: the self-service portal's data (spec 002 § Portal data resources). `users` stays the session
// service's table (so phone lookup keeps working) and gains the provider identity and the editable
// profile; a person who signed in without a phone number has none yet, hence phone_number nullable.
import type { Knex } from 'knex';
import { timestamps, updatedAtTrigger } from '../shared/db/timestamps.js';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.string('idp_subject', 255).unique();
    t.specificType('roles', 'text[]').notNullable().defaultTo(knex.raw(`'{user}'::text[]`));
    t.string('timezone', 64).notNullable().defaultTo('UTC');
    t.jsonb('notification_preferences').notNullable().defaultTo(knex.raw(`'{}'::jsonb`));
  });
  await knex.raw('alter table users alter column phone_number drop not null');
  // Matching a sign-in by verified email.
  await knex.raw('create index users_email_lower on users (lower(email))');

  await knex.schema.createTable('contacts', (t) => {
    t.uuid('contact_id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('owner_id').notNullable().references('user_id').inTable('users').onDelete('CASCADE');
    t.string('name', 200).notNullable();
    t.string('email', 320);
    t.string('phone', 20);
    t.string('company', 200);
    t.specificType('tags', 'text[]').notNullable().defaultTo(knex.raw(`'{}'::text[]`));
    t.boolean('favorite').notNullable().defaultTo(false);
    timestamps(t, knex);
    t.index(['owner_id', 'name']);
  });
  await knex.raw('create index contacts_tags on contacts using gin (tags)');
  await updatedAtTrigger(knex, 'contacts');

  await knex.schema.createTable('documents', (t) => {
    t.uuid('document_id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('owner_id').notNullable().references('user_id').inTable('users').onDelete('CASCADE');
    t.string('filename', 255).notNullable();
    t.string('category', 100);
    t.specificType('tags', 'text[]').notNullable().defaultTo(knex.raw(`'{}'::text[]`));
    t.string('rag_status', 20).notNullable().defaultTo('pending');
    t.text('failure_reason');
    t.bigInteger('size').notNullable();
    t.string('content_type', 255).notNullable();
    t.string('checksum', 64).notNullable();
    t.timestamp('uploaded_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('indexed_at', { useTz: true });
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['owner_id', 'uploaded_at']);
  });
  await knex.raw(`alter table documents add constraint documents_rag_status_valid check (rag_status in ('pending','processing','indexed','failed'))`);
  await updatedAtTrigger(knex, 'documents');

  // The content, apart from the metadata so lists never read it (the Postgres storage backend).
  await knex.schema.createTable('document_contents', (t) => {
    t.uuid('document_id').primary().references('document_id').inTable('documents').onDelete('CASCADE');
    t.binary('content').notNullable();
  });

  await knex.schema.createTable('document_chunks', (t) => {
    t.bigIncrements('chunk_id');
    t.uuid('document_id').notNullable().references('document_id').inTable('documents').onDelete('CASCADE');
    // Copied from the document so a search filters chunks by owner without a join.
    t.uuid('owner_id').notNullable();
    t.integer('ordinal').notNullable();
    t.text('content').notNullable();
    t.unique(['document_id', 'ordinal']);
    t.index(['owner_id']);
  });
  await knex.raw(`alter table document_chunks add column tsv tsvector generated always as (to_tsvector('english', content)) stored`);
  await knex.raw('create index document_chunks_tsv on document_chunks using gin (tsv)');

  await knex.schema.createTable('portal_cases', (t) => {
    t.uuid('case_id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('requester_id').notNullable().references('user_id').inTable('users').onDelete('CASCADE');
    t.uuid('assignee_id').references('user_id').inTable('users').onDelete('SET NULL');
    t.string('title', 200).notNullable();
    t.text('description').notNullable().defaultTo('');
    t.string('status', 20).notNullable().defaultTo('open');
    t.string('priority', 2).notNullable().defaultTo('P3');
    timestamps(t, knex);
    t.timestamp('resolved_at', { useTz: true });
    t.timestamp('closed_at', { useTz: true });
    t.index(['requester_id', 'created_at']);
    t.index(['status', 'priority']);
  });
  await knex.raw(`alter table portal_cases add constraint portal_cases_status_valid check (status in ('open','in_progress','waiting','resolved','closed'))`);
  await knex.raw(`alter table portal_cases add constraint portal_cases_priority_valid check (priority in ('P1','P2','P3','P4'))`);
  await updatedAtTrigger(knex, 'portal_cases');

  await knex.schema.createTable('portal_case_comments', (t) => {
    t.uuid('comment_id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('case_id').notNullable().references('case_id').inTable('portal_cases').onDelete('CASCADE');
    t.uuid('author_id').notNullable().references('user_id').inTable('users').onDelete('CASCADE');
    t.text('body').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['case_id', 'created_at']);
  });

  await knex.raw(`
    create view v_portal_cases_full as
    select c.*, r.display_name as requester_name, r.email as requester_email, a.display_name as assignee_name,
           (select count(*) from portal_case_comments m where m.case_id = c.case_id)::int as comment_count
    from portal_cases c
    join users r on r.user_id = c.requester_id
    left join users a on a.user_id = c.assignee_id
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop view if exists v_portal_cases_full');
  for (const table of ['portal_case_comments', 'portal_cases', 'document_chunks', 'document_contents', 'documents', 'contacts']) {
    await knex.schema.dropTableIfExists(table);
  }
  await knex.raw('drop index if exists users_email_lower');
  await knex.schema.alterTable('users', (t) => {
    t.dropColumns('idp_subject', 'roles', 'timezone', 'notification_preferences');
  });
}
