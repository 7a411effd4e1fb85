/** Migration helpers for the columns every table has. */
import type { Knex } from 'knex';

/** created_at and updated_at, both defaulting to now(). */
export function timestamps(t: Knex.CreateTableBuilder, knex: Knex): void {
  t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
}

/** Keeps updated_at current on every UPDATE of the table (see the base migration's set_updated_at()). */
export function updatedAtTrigger(knex: Knex, table: string): Knex.Raw {
  return knex.raw(`create trigger ${table}_updated_at before update on ${table} for each row execute function set_updated_at()`);
}
