/**
 * sre_silences: label matchers over a time range. A silence is pending before starts_at, active
 * until ends_at, then expired; it expires by itself (state is computed from the clock) and ending it
 * early sets ends_at to now.
 */
import type { Knex } from 'knex';
import { db } from '../../db/index.js';
import { paged, type OffsetPage } from '../listing.js';
import { matchPredicate, type Matcher } from '../automation/matchers.js';

const TABLE = 'sre_silences';
export type SilenceState = 'pending' | 'active' | 'expired';

interface Row {
  id: string;
  matchers: Matcher[];
  starts_at: Date;
  ends_at: Date;
  created_by: string;
  comment: string;
  ended_by: string | null;
  state: SilenceState;
  created_at: Date;
  updated_at: Date;
}

const toDomain = (r: Row) => ({
  id: r.id,
  matchers: r.matchers,
  starts_at: r.starts_at.toISOString(),
  ends_at: r.ends_at.toISOString(),
  created_by: r.created_by,
  comment: r.comment,
  ended_by: r.ended_by,
  state: r.state,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});
export type Silence = ReturnType<typeof toDomain>;

const stateSql = `case when s.ends_at <= now() then 'expired' when s.starts_at > now() then 'pending' else 'active' end`;
const selectSilences = (k: Knex) => k(`${TABLE} as s`).select('s.*', k.raw(`${stateSql} as state`));

/**
 * SQL predicate: is the alert whose labels are the SQL expression `labels` silenced now? Arguments
 * are SQL expressions, never user input.
 */
export function silencedPredicate(labels: string): string {
  return `exists (select 1 from ${TABLE} sil where sil.starts_at <= now() and sil.ends_at > now()
            and ${matchPredicate('sil.matchers', `'{}'::text[]`, labels)})`;
}

/** SQL expression: ids of the active silences matching `labels` (a text[]; empty when none). */
export function silencedBySql(labels: string): string {
  return `array(select sil.id::text from ${TABLE} sil where sil.starts_at <= now() and sil.ends_at > now()
            and ${matchPredicate('sil.matchers', `'{}'::text[]`, labels)} order by sil.created_at)`;
}

/** Would these matchers silence every alert (they all match an alert without labels)? */
export async function matchesEverything(matchers: Matcher[], k: Knex = db()): Promise<boolean> {
  const { rows } = await k.raw(`select ${matchPredicate(`?::jsonb`, `'{}'::text[]`, `'{}'::jsonb`)} as all`, [JSON.stringify(matchers)]);
  return rows[0].all;
}

export interface NewSilence {
  matchers: Matcher[];
  starts_at: string;
  ends_at: string;
  created_by: string;
  comment: string;
}

export async function insertSilence(s: NewSilence, k: Knex = db()): Promise<Silence> {
  const [row] = await k(TABLE).insert({ ...s, matchers: JSON.stringify(s.matchers) }).returning('id');
  return (await findSilence(row.id, k))!;
}

export async function findSilence(id: string, k: Knex = db()): Promise<Silence | undefined> {
  const row = (await selectSilences(k).where('s.id', id).first()) as Row | undefined;
  return row && toDomain(row);
}

/**
 * Ends a silence that has not expired yet: ends_at := now (a pending one also starts now, as
 * Alertmanager does); false when it is already expired or unknown.
 */
export async function endSilence(id: string, by: string, k: Knex = db()): Promise<boolean> {
  const n = await k(TABLE)
    .where({ id })
    .where('ends_at', '>', k.fn.now())
    .update({ ends_at: k.fn.now(), starts_at: k.raw(`least(starts_at, now() - interval '1 microsecond')`), ended_by: by });
  return n > 0;
}

export interface SilenceFilter {
  state?: SilenceState[];
  limit: number;
  offset: number;
}

/** Silences, newest first; `state` filters on the computed state. */
export async function listSilences(f: SilenceFilter, k: Knex = db()): Promise<OffsetPage<Silence>> {
  const q = selectSilences(k);
  if (f.state?.length) q.whereRaw(`${stateSql} = any(?::text[])`, [f.state]);
  return paged<Row, Silence>(q, { ...f, orderBy: 's.created_at desc, s.id', timeColumn: 's.created_at' }, toDomain);
}

/** Number of alerts (not resolved) an active silence covers now. */
export async function silencedAlertCount(id: string, k: Knex = db()): Promise<number> {
  const { rows } = await k.raw(
    `select count(*)::int as n from sre_alert_instances a, ${TABLE} sil
      where sil.id = ? and a.status <> 'resolved' and sil.starts_at <= now() and sil.ends_at > now()
        and ${matchPredicate('sil.matchers', `'{}'::text[]`, 'a.labels')}`,
    [id],
  );
  return rows[0].n;
}
