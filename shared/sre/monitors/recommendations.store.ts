/** The monitor aggregate's store: sre_recommendations and the monitors applied from them (sre_entity_monitors). */
import type { Knex } from 'knex';
import { db } from '../../db/index.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import type { AlertingRule } from './rules.js';

const RECS = 'sre_recommendations';
const MONITORS = 'sre_entity_monitors';

export interface Recommendation {
  id: string;
  entity_id: string;
  origin: 'template' | 'llm';
  template: string;
  alert: string;
  rule: AlertingRule;
  rationale: string;
  status: 'proposed' | 'applied' | 'dismissed';
  created_at: Date;
  updated_at: Date;
}

export interface Monitor {
  id: string;
  entity_id: string;
  recommendation_id: string | null;
  alert: string;
  rule: AlertingRule;
  /** pending: to deploy; deployed: in the rule file; disabled: kept, left out of the rule file at the next deploy. */
  status: 'pending' | 'deployed' | 'disabled';
  last_error: string | null;
  deployed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface NewRecommendation {
  entity_id: string;
  origin: Recommendation['origin'];
  template: string;
  rule: AlertingRule;
  rationale: string;
}

/**
 * Stores recommendations (an entity's alert name is stored once; repeats are skipped) and, with
 * `apply`, turns each stored one into a pending monitor in the same statement. Returns rows written.
 */
export async function storeRecommendations(items: NewRecommendation[], apply: boolean): Promise<{ recommendations: Recommendation[]; monitors: number }> {
  if (!items.length) return { recommendations: [], monitors: 0 };
  const { rows } = await db().raw(
    `with input as (
       select * from jsonb_to_recordset(?::jsonb) as x(entity_id uuid, origin text, template text, rule jsonb, rationale text)
     ), recs as (
       insert into ${RECS} (entity_id, origin, template, alert, rule, rationale, status)
       select entity_id, origin, template, rule->>'alert', rule, rationale, case when ? then 'applied' else 'proposed' end from input
       on conflict (entity_id, alert) do nothing
       returning *
     ), monitors as (
       insert into ${MONITORS} (entity_id, recommendation_id, alert, rule)
       select entity_id, id, alert, rule from recs where ?
       on conflict (entity_id, alert) do nothing
       returning 1
     )
     select recs.*, (select count(*) from monitors) as monitor_count from recs`,
    [JSON.stringify(items), apply, apply],
  );
  return { recommendations: rows.map(({ monitor_count: _, ...r }: Recommendation & { monitor_count: number }) => r), monitors: Number(rows[0]?.monitor_count ?? 0) };
}

export async function listRecommendations(f: { entity_id?: string; status?: Recommendation['status']; limit: number; offset: number }): Promise<Recommendation[]> {
  const q = db()<Recommendation>(RECS).orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(f.limit).offset(f.offset);
  if (f.entity_id) q.where({ entity_id: f.entity_id });
  if (f.status) q.where({ status: f.status });
  return q;
}

/** Turns a recommendation into a pending monitor (once; applying again returns the same monitor). */
export async function applyRecommendation(id: string): Promise<Monitor> {
  return db().transaction(async (trx) => {
    const rec = await trx<Recommendation>(RECS).where({ id }).forUpdate().first();
    if (!rec) throw new NotFoundError(`Recommendation ${id} does not exist.`);
    if (rec.status === 'dismissed') throw new ConflictError(`Recommendation ${id} was dismissed; it cannot be applied.`, [], { current_status: rec.status });
    await trx(RECS).where({ id }).whereNot({ status: 'applied' }).update({ status: 'applied' });
    await trx(MONITORS)
      .insert({ entity_id: rec.entity_id, recommendation_id: rec.id, alert: rec.alert, rule: JSON.stringify(rec.rule) })
      .onConflict(['entity_id', 'alert'])
      .ignore();
    return (await trx<Monitor>(MONITORS).where({ entity_id: rec.entity_id, alert: rec.alert }).first())!;
  });
}

/** Dismisses a proposed recommendation; an applied one has a monitor and cannot be dismissed. */
export async function dismissRecommendation(id: string): Promise<Recommendation> {
  const [row] = await db()<Recommendation>(RECS).where({ id }).whereNot({ status: 'applied' }).update({ status: 'dismissed' }).returning('*');
  if (row) return row;
  const rec = await db()<Recommendation>(RECS).where({ id }).first();
  if (!rec) throw new NotFoundError(`Recommendation ${id} does not exist.`);
  throw new ConflictError(`Recommendation ${id} is applied; remove its monitor instead.`, [], { current_status: rec.status });
}

export async function listMonitors(f: { entity_id?: string; status?: Monitor['status']; limit: number; offset: number }): Promise<Monitor[]> {
  const q = db()<Monitor>(MONITORS).orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(f.limit).offset(f.offset);
  if (f.entity_id) q.where({ entity_id: f.entity_id });
  if (f.status) q.where({ status: f.status });
  return q;
}

export async function countMonitors(): Promise<Record<Monitor['status'], number>> {
  const rows = await db()(MONITORS).select('status').count<{ status: Monitor['status']; count: number }[]>({ count: '*' }).groupBy('status');
  return { pending: 0, deployed: 0, disabled: 0, ...Object.fromEntries(rows.map((r) => [r.status, Number(r.count)])) };
}

export async function getMonitor(id: string): Promise<Monitor> {
  const row = await db()<Monitor>(MONITORS).where({ id }).first();
  if (!row) throw new NotFoundError(`Monitor ${id} does not exist.`);
  return row;
}

/** Disables a monitor (left out of the rule file at the next deploy) or enables it again (pending until deployed). */
export async function setMonitorEnabled(id: string, enabled: boolean): Promise<Monitor> {
  const current = await getMonitor(id);
  if (enabled === (current.status !== 'disabled')) return current;
  const [row] = await db()<Monitor>(MONITORS)
    .where({ id })
    .update({ status: enabled ? 'pending' : 'disabled', deployed_at: null, last_error: null })
    .returning('*');
  return row!;
}

/** Removes a monitor (its recommendation goes back to proposed); a deployed one leaves the rule file at the next deploy. */
export async function deleteMonitor(id: string): Promise<void> {
  await db().transaction(async (trx) => {
    const [row] = await trx<Monitor>(MONITORS).where({ id }).delete().returning(['recommendation_id']);
    if (!row) throw new NotFoundError(`Monitor ${id} does not exist.`);
    // The recommendation can be applied again later.
    if (row.recommendation_id) await trx(RECS).where({ id: row.recommendation_id }).update({ status: 'proposed' });
  });
}

/** Deletes the monitors of entities gone stale (deploy.ts, inside its transaction); returns how many. */
export async function deletedStaleMonitors(trx: Knex): Promise<number> {
  return (await trx(MONITORS).whereIn('entity_id', trx('sre_entities').where({ stale: true }).select('id')).delete()) as number;
}

/** The monitors that belong in the rule file (all but the disabled ones), oldest first. */
export async function monitorsToDeploy(k: Knex): Promise<Array<Pick<Monitor, 'id' | 'entity_id' | 'rule' | 'status'>>> {
  return k<Monitor>(MONITORS).whereNot({ status: 'disabled' }).select('id', 'entity_id', 'rule', 'status').orderBy([{ column: 'created_at' }, { column: 'id' }]);
}

/** Marks monitors deployed (their rules are loaded), clearing any earlier error. */
export async function markMonitorsDeployed(trx: Knex, ids: string[]): Promise<void> {
  await trx(MONITORS).whereIn('id', ids).update({ status: 'deployed', deployed_at: trx.fn.now(), last_error: null });
}

/** Records why deploying these (still pending) monitors failed. */
export async function recordDeployError(ids: string[], message: string): Promise<void> {
  await db()(MONITORS).whereIn('id', ids).update({ last_error: message });
}
