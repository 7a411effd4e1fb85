/**
 * sre_alert_instances and sre_alert_state_history: reads, lifecycle moves by API and flapping. The
 * ingest's write (payload rows, then the folded alerts in one set-based statement) is its own
 * operation, write-payloads.sql.ts.
 */
import type { Knex } from 'knex';
import { containsPattern, db } from '../../db/index.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { paged, type OffsetPage } from '../listing.js';
import { silencedBySql, silencedPredicate } from '../silences/silence.store.js';

export const TABLE = 'sre_alert_instances';
export const HISTORY = 'sre_alert_state_history';
export type AlertStatus = 'firing' | 'acknowledged' | 'resolved';

/** Allowed moves of the alert lifecycle. */
export const alertTransitions: Record<AlertStatus, AlertStatus[]> = {
  firing: ['acknowledged', 'resolved'],
  acknowledged: ['resolved'],
  resolved: [],
};

interface Row {
  id: string;
  source_id: string;
  source_kind: string;
  source_name: string;
  fingerprint: string;
  status: AlertStatus;
  alertname: string;
  severity: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  values: Record<string, unknown>;
  generator_url: string;
  starts_at: Date | null;
  ends_at: Date | null;
  first_received_at: Date;
  last_received_at: Date;
  occurrence_count: number;
  flapping: boolean;
  acknowledged_at: Date | null;
  acknowledged_by: string | null;
  resolved_at: Date | null;
  resolved_by: string | null;
  incident_id: string | null;
  silenced_by: string[];
  created_at: Date;
  updated_at: Date;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function toDomain(r: Row) {
  return {
    id: r.id,
    source: { id: r.source_id, kind: r.source_kind, name: r.source_name },
    fingerprint: r.fingerprint,
    status: r.status,
    alertname: r.alertname,
    severity: r.severity,
    labels: r.labels,
    annotations: r.annotations,
    values: r.values,
    generator_url: r.generator_url,
    starts_at: iso(r.starts_at),
    ends_at: iso(r.ends_at),
    first_received_at: r.first_received_at.toISOString(),
    last_received_at: r.last_received_at.toISOString(),
    occurrence_count: r.occurrence_count,
    flapping: r.flapping,
    acknowledged_at: iso(r.acknowledged_at),
    acknowledged_by: r.acknowledged_by,
    resolved_at: iso(r.resolved_at),
    resolved_by: r.resolved_by,
    incident_id: r.incident_id,
    silenced: r.silenced_by.length > 0,
    silenced_by: r.silenced_by,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}
export type AlertInstance = ReturnType<typeof toDomain>;

const selectAlerts = (k: Knex) =>
  k(`${TABLE} as a`)
    .join('sre_alert_sources as s', 's.id', 'a.source_id')
    .select('a.*', 's.kind as source_kind', 's.name as source_name', k.raw(`case when a.status = 'resolved' then '{}'::text[] else ${silencedBySql('a.labels')} end as silenced_by`));

export interface AlertFilter {
  status?: AlertStatus[];
  severity?: string[];
  source?: string;
  label?: Record<string, string>;
  fingerprint?: string;
  flapping?: boolean;
  incident_id?: string;
  silenced?: boolean;
  /** Text matched case-insensitively in the alert name, labels and annotations. */
  q?: string;
  since?: string;
  until?: string;
  limit: number;
  offset: number;
}

/** Alerts, newest activity first; `source` is "kind/name", a name or a source id. */
export async function listAlerts(f: AlertFilter): Promise<OffsetPage<AlertInstance>> {
  const q = selectAlerts(db());
  if (f.status?.length) q.whereIn('a.status', f.status);
  if (f.severity?.length) q.whereIn('a.severity', f.severity);
  if (f.source) {
    const [kind, name] = f.source.includes('/') ? f.source.split('/', 2) : [undefined, f.source];
    if (/^[0-9a-f-]{36}$/i.test(f.source)) q.where('a.source_id', f.source);
    else {
      q.where('s.name', name!);
      if (kind) q.where('s.kind', kind);
    }
  }
  if (f.label && Object.keys(f.label).length) q.whereRaw('a.labels @> ?::jsonb', [JSON.stringify(f.label)]);
  if (f.fingerprint) q.where('a.fingerprint', f.fingerprint);
  if (f.flapping !== undefined) q.where('a.flapping', f.flapping);
  if (f.incident_id) q.where('a.incident_id', f.incident_id);
  if (f.silenced !== undefined) q.whereRaw(`${f.silenced ? '' : 'not '}(a.status <> 'resolved' and ${silencedPredicate('a.labels')})`);
  if (f.q) {
    const like = containsPattern(f.q);
    q.where((w) => w.whereILike('a.alertname', like).orWhereRaw('a.labels::text ilike ?', [like]).orWhereRaw('a.annotations::text ilike ?', [like]));
  }
  return paged<Row, AlertInstance>(q, { ...f, orderBy: 'a.last_received_at desc, a.id', timeColumn: 'a.last_received_at' }, toDomain);
}

/** How many alerts are in each state, and how many of the live ones (firing or acknowledged) carry each severity. */
export async function alertCounts(): Promise<{ by_status: Record<AlertStatus, number>; by_severity: Record<string, number> }> {
  const [statuses, severities] = await Promise.all([
    db()(TABLE).select('status').count({ n: '*' }).groupBy('status') as Promise<Array<{ status: AlertStatus; n: string | number }>>,
    db()(TABLE).whereIn('status', ['firing', 'acknowledged']).select('severity').count({ n: '*' }).groupBy('severity') as Promise<Array<{ severity: string; n: string | number }>>,
  ]);
  const by_status: Record<AlertStatus, number> = { firing: 0, acknowledged: 0, resolved: 0 };
  for (const r of statuses) by_status[r.status] = Number(r.n);
  return { by_status, by_severity: Object.fromEntries(severities.map((r) => [r.severity, Number(r.n)])) };
}

export async function getAlert(id: string, k: Knex = db()): Promise<AlertInstance> {
  const row = (await selectAlerts(k).where('a.id', id).first()) as Row | undefined;
  if (!row) throw new NotFoundError(`No alert ${id}.`);
  return toDomain(row);
}

interface HistoryRow {
  id: string;
  alert_id: string;
  from_status: AlertStatus | null;
  to_status: AlertStatus;
  actor: string;
  note: string | null;
  at: Date;
}
const historyToDomain = (r: HistoryRow) => ({
  id: r.id,
  alert_id: r.alert_id,
  from: r.from_status,
  to: r.to_status,
  by: r.actor,
  note: r.note,
  at: r.at.toISOString(),
});
export type AlertStateChange = ReturnType<typeof historyToDomain>;

/** The state history of one alert instance, oldest first. */
export async function alertHistory(id: string, page: { limit: number; offset: number; since?: string; until?: string }): Promise<OffsetPage<AlertStateChange>> {
  await getAlert(id);
  const q = db()<HistoryRow>(HISTORY).where({ alert_id: id }).select('*');
  return paged<HistoryRow, AlertStateChange>(q, { ...page, orderBy: 'at, created_at, id', timeColumn: 'at' }, historyToDomain);
}

/**
 * Re-evaluates flapping of the open instances of these fingerprints: flapping when the fingerprint
 * changed state more than `threshold` times within the window; it stays flapping until a full
 * window passes without a change.
 */
export async function evaluateFlapping(trx: Knex, sourceId: string, fingerprints: string[], threshold: number, windowSeconds: number): Promise<void> {
  if (!fingerprints.length) return;
  await trx.raw(
    `
    update sre_alert_instances a set flapping = s.n > :threshold or (a.flapping and s.n > 0)
    from (
      select i.id, (select count(*) from sre_alert_state_history h
                    where h.source_id = i.source_id and h.fingerprint = i.fingerprint
                      and h.at > now() - make_interval(secs => :window)) as n
      from sre_alert_instances i
      where i.source_id = :sourceId and i.fingerprint = any(:fps) and i.status <> 'resolved'
    ) s
    where a.id = s.id and a.flapping is distinct from (s.n > :threshold or (a.flapping and s.n > 0))
    `,
    { threshold, window: windowSeconds, sourceId, fps: fingerprints },
  );
}

/** Clears flapping where a full window passed without a state change; returns how many settled. */
export async function settleFlapping(windowSeconds: number): Promise<number> {
  const { rowCount } = await db().raw(
    `
    update sre_alert_instances a set flapping = false
    where a.flapping and not exists (
      select 1 from sre_alert_state_history h
      where h.source_id = a.source_id and h.fingerprint = a.fingerprint and h.at > now() - make_interval(secs => :window))
    `,
    { window: windowSeconds },
  );
  return rowCount ?? 0;
}

/** Moves one alert through its lifecycle by API, with its history row; 409 naming the allowed moves. */
export async function transitionAlert(trx: Knex, id: string, to: AlertStatus, by: string, note?: string): Promise<{ sourceId: string; fingerprint: string }> {
  const row = (await trx<Row>(TABLE).where({ id }).forUpdate().first()) as Row | undefined;
  if (!row) throw new NotFoundError(`No alert ${id}.`);
  const allowed = alertTransitions[row.status];
  if (!allowed.includes(to)) {
    throw new ConflictError(`An alert that is ${row.status} cannot become ${to}.`, [], { current_status: row.status, allowed_next_states: allowed });
  }
  const stamp = to === 'acknowledged' ? { acknowledged_at: trx.fn.now(), acknowledged_by: by } : { resolved_at: trx.fn.now(), resolved_by: by };
  await trx(TABLE).where({ id }).update({ status: to, ...stamp });
  await trx(HISTORY).insert({ alert_id: id, source_id: row.source_id, fingerprint: row.fingerprint, from_status: row.status, to_status: to, actor: by, note: note ?? null });
  return { sourceId: row.source_id, fingerprint: row.fingerprint };
}
