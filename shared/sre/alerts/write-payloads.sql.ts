/**
 * Operation of the alert ingest over sre_alert_payloads, sre_alert_instances and
 * sre_alert_state_history: a batch of one source's payloads written in one transaction. A payload row
 * each (idempotency and retries of the same body), then the payloads' notifications folded per
 * fingerprint and written by one set-based statement: dedup by (source, fingerprint) through the
 * partial unique index of open instances. ingest.ts runs it; alert.store.ts keeps the reads and moves.
 */
import type { Knex } from 'knex';
import { preparedStatement } from '../../db/index.js';
import type { NormalizedAlert } from './payloads.js';

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
