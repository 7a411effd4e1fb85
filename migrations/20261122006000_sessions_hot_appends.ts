// Why: every appended message refreshes sessions.last_activity. With last_activity indexed, each of
// those updates wrote new entries into all four indexes of sessions (a non-HOT update); without it
// they are HOT updates (same page, no index writes). The expiry sweep compares last_activity with
// each row's own resume_window, which no index on last_activity answers; it reads the live sessions
// through the partial unique index sessions_one_live_per_user, whose predicate is its own.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists sessions_live_by_activity');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`create index sessions_live_by_activity on sessions (last_activity) where status <> 'closed'`);
}
