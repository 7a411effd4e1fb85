/**
 * sre_alert_instances and sre_alert_state_history. A payload's alerts are written by one set-based
 * statement: dedup by (source, fingerprint) through the partial unique index of open instances.
 */
import type { Knex } from 'knex';
import { containsPattern, db, preparedStatement } from '../../db/index.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { paged, type OffsetPage } from '../listing.js';
import type { NormalizedAlert } from './payloads.js';
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

export interface IngestResult {
  /** False when this payload id was already written (a retried job). */
  fresh: boolean;
  /** Payloads written together with this one (group commit); the counts below are the batch's. */
  batch: number;
  opened: number;
  updated: number;
  resolved: number;
  /** Resolved notifications that matched no open instance (nothing to resolve). */
  unmatched: number;
  /** Fingerprints whose state changed (flapping is re-evaluated for them). */
  changed: string[];
}

/** One accepted payload as the worker writes it. */
export interface PayloadToWrite {
  payloadId: string;
  receivedAt: string;
  alerts: NormalizedAlert[];
  /** Set for webhook payloads: how to recognise an attempt of the same body in an adjacent retry window. */
  sameBody?: SameBody;
}

/** See retryOfAdjacentWindow in ingest.ts. */
export interface SameBody {
  /** pg_advisory_xact_lock key of the body. */
  lockKey: bigint;
  /** The body's payload ids in the windows before and after its own. */
  adjacentIds: [string, string];
}

/**
 * Locks the bodies' keys in the order given: unnest reads an array in its order. (An order by here would
 * not help: it sorts the rows after the select list, and so the locking, has run.)
 */
const lockBodiesStatement = preparedStatement('sre.alerts-lock-bodies', 'select pg_advisory_xact_lock(k) from unnest($1::bigint[]) as k');

const insertPayloadsStatement = preparedStatement<{ id: string; retry_of: string | null }>(
  'sre.alerts-insert-payloads',
  `
    insert into sre_alert_payloads (id, source_id, alert_count, received_at, retry_of)
    select x.id, $2::uuid, x.alert_count, x.received_at, (
      select coalesce(p.retry_of, p.id) from sre_alert_payloads p
      where p.id in (x.before_id, x.after_id)
        and p.received_at > x.received_at - make_interval(secs => $7) and p.received_at < x.received_at + make_interval(secs => $7)
      limit 1
    ) as retry_of
    from unnest($1::uuid[], $3::int[], $4::timestamptz[], $5::uuid[], $6::uuid[]) as x(id, alert_count, received_at, before_id, after_id)
    order by x.id
    on conflict (id) do nothing
    returning id, retry_of
  `,
);

/**
 * The payload rows (idempotency); answers the ids not written before, i.e. the payloads whose alerts
 * still count. A payload is a retry when its id was written, or when the same body was written under
 * an adjacent window's id less than `retryWindowSeconds` apart: then its row is written with
 * `retry_of` naming the attempt that counted (so every id the webhook answered exists), and its
 * alerts do not count. The bodies are locked first (in key order, so concurrent writers wait rather
 * than deadlock): this statement then sees the other attempt's row if that one committed, and the
 * other attempt waits for this one.
 */
export async function insertPayloads(trx: Knex, sourceId: string, payloads: PayloadToWrite[], retryWindowSeconds: number): Promise<Set<string>> {
  const lockKeys = [...new Set(payloads.flatMap((x) => (x.sameBody ? [x.sameBody.lockKey] : [])))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (lockKeys.length) await lockBodiesStatement([lockKeys.map(String)], trx);
  const rows = await insertPayloadsStatement(
    [
      payloads.map((x) => x.payloadId),
      sourceId,
      payloads.map((x) => x.alerts.length),
      payloads.map((x) => x.receivedAt),
      payloads.map((x) => x.sameBody?.adjacentIds[0] ?? null),
      payloads.map((x) => x.sameBody?.adjacentIds[1] ?? null),
      retryWindowSeconds,
    ],
    trx,
  );
  return new Set(rows.filter((r) => r.retry_of === null).map((r) => r.id));
}

/** The notifications of one fingerprint folded into one: the last one's content, every firing counted. */
interface FoldedAlert extends NormalizedAlert {
  firings: number;
  first_at: string;
  last_at: string;
}

/**
 * Folds the payloads' notifications per fingerprint, in payload order: the last one gives status and
 * content, every firing one counts as an occurrence, first and last received come from the earliest
 * and latest payload that carried it. Done here rather than in the statement: sorting and windowing
 * 6,400 notifications of a 64-payload batch cost Postgres more than upserting the 1,000 rows they fold
 * into. Sorted by fingerprint in code-unit order, the order ("C" collation) rows are locked in.
 */
export function foldAlerts(payloads: PayloadToWrite[]): { folded: FoldedAlert[]; resolvedNotifications: number } {
  const byFingerprint = new Map<string, { last: NormalizedAlert; firings: number; first_at: string; last_at: string }>();
  let resolvedNotifications = 0;
  for (const p of payloads) {
    for (const a of p.alerts) {
      const firing = a.status === 'firing' ? 1 : 0;
      resolvedNotifications += 1 - firing;
      const seen = byFingerprint.get(a.fingerprint);
      if (!seen) byFingerprint.set(a.fingerprint, { last: a, firings: firing, first_at: p.receivedAt, last_at: p.receivedAt });
      else {
        seen.last = a;
        seen.firings += firing;
        if (p.receivedAt < seen.first_at) seen.first_at = p.receivedAt;
        if (p.receivedAt > seen.last_at) seen.last_at = p.receivedAt;
      }
    }
  }
  const folded = [...byFingerprint.values()]
    .map(({ last, firings, first_at, last_at }) => ({ ...last, firings, first_at, last_at }))
    .sort((x, y) => (x.fingerprint < y.fingerprint ? -1 : x.fingerprint > y.fingerprint ? 1 : 0));
  return { folded, resolvedNotifications };
}

interface WrittenCounts {
  opened: number;
  updated: number;
  resolved: number;
  changed: string[];
}

const writeAlertsStatement = preparedStatement<WrittenCounts>(
  'sre.alerts-write-folded',
  `
    with agg as (
      select * from jsonb_to_recordset($3::jsonb) as r(fingerprint text, status text, labels jsonb, annotations jsonb, "values" jsonb,
                                                       starts_at timestamptz, ends_at timestamptz, generator_url text,
                                                       firings int, first_at timestamptz, last_at timestamptz)
    ),
    fired as (
      insert into sre_alert_instances as a
        (source_id, fingerprint, status, alertname, severity, labels, annotations, "values", generator_url, starts_at, ends_at,
         first_received_at, last_received_at, occurrence_count)
      select $1::uuid, fingerprint, 'firing', coalesce(labels->>'alertname', ''), coalesce(labels->>'severity', ''), labels,
             coalesce(annotations, '{}'), coalesce("values", '{}'), coalesce(generator_url, ''), starts_at, ends_at, first_at, last_at, firings
      from agg where status = 'firing'
      order by fingerprint collate "C"
      on conflict (source_id, fingerprint) where status <> 'resolved' do update set
        last_received_at = greatest(a.last_received_at, excluded.last_received_at),
        occurrence_count = a.occurrence_count + excluded.occurrence_count,
        annotations = excluded.annotations,
        "values" = excluded."values",
        generator_url = excluded.generator_url,
        ends_at = excluded.ends_at
      returning a.id, a.fingerprint, (xmax = 0) as inserted, a.first_received_at as at
    ),
    closing as (
      select a.id, a.status as prev, g.ends_at, g.first_at as at
      from sre_alert_instances a
      join agg g on g.fingerprint = a.fingerprint and g.status = 'resolved'
      where a.source_id = $1 and a.status <> 'resolved'
      order by a.fingerprint collate "C"
      for update of a
    ),
    resolved as (
      update sre_alert_instances a
      set status = 'resolved', resolved_at = c.at, resolved_by = $2, ends_at = coalesce(c.ends_at, a.ends_at), last_received_at = c.at
      from closing c where a.id = c.id
      returning a.id, a.fingerprint, c.prev, c.at
    ),
    history as (
      insert into sre_alert_state_history (alert_id, source_id, fingerprint, from_status, to_status, actor, at)
      select id, $1::uuid, fingerprint, null, 'firing', $2::text, at from fired where inserted
      union all
      select id, $1::uuid, fingerprint, prev, 'resolved', $2::text, at from resolved
      returning fingerprint
    )
    select (select count(*) from fired where inserted)::int as opened,
           (select count(*) from fired where not inserted)::int as updated,
           (select count(*) from resolved)::int as resolved,
           array(select distinct fingerprint from history) as changed
  `,
);

/**
 * Writes the payloads of one source: a payload row each (idempotency: a payload already written adds
 * nothing), then the folded alerts (foldAlerts) in one statement: the upsert of the firing ones (one
 * open instance per fingerprint; repeats add to occurrence_count), the resolution of the resolved ones
 * and a history row per state change. The caller keeps each fingerprint to one status across payloads
 * (see takeBatch in ingest.ts), so the fold loses no state transition that one-by-one writes make.
 * Named prepared statements: parsing and planning anew on every call cost Postgres ~1.5 ms a payload.
 */
export async function writePayloads(
  trx: Knex,
  p: { sourceId: string; actor: string; retryWindowSeconds: number; payloads: PayloadToWrite[] },
): Promise<Omit<IngestResult, 'fresh' | 'batch'> & { freshIds: Set<string> }> {
  const freshIds = await insertPayloads(trx, p.sourceId, p.payloads, p.retryWindowSeconds);
  const { folded, resolvedNotifications } = foldAlerts(p.payloads.filter((x) => freshIds.has(x.payloadId)));
  if (!folded.length) return { freshIds, opened: 0, updated: 0, resolved: 0, unmatched: 0, changed: [] };
  // The statement always answers one row of counts.
  const [r] = (await writeAlertsStatement([p.sourceId, p.actor, JSON.stringify(folded)], trx)) as [WrittenCounts];
  return { freshIds, opened: r.opened, updated: r.updated, resolved: r.resolved, unmatched: resolvedNotifications - r.resolved, changed: r.changed };
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
