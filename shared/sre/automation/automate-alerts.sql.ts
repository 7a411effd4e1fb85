/**
 * Operation across the alert, incident and runbook-execution aggregates: the set-based statements
 * of alert automation (shared/sre/automation/automation.ts runs them in one transaction per round).
 * Each touches several aggregates at once so that every pending alert is handled in a few statements.
 */
import type { Knex } from 'knex';
import { matchPredicate } from './matchers.js';
import { silencedPredicate } from '../silences/silence.store.js';
import { TimelineKind } from '../incidents/incident.store.js';

export interface Pending {
  id: string;
  rule_id: string | null;
  group_key: string | null;
  severity: string | null;
  title: string | null;
  group_labels: Record<string, string> | null;
}

/** Claims firing, stable alerts not yet automated (skipping ones another worker holds) and matches them to incident rules. */
export async function claimPending(trx: Knex, batch: number): Promise<Pending[]> {
  const { rows } = await trx.raw(`
    with pending as (
      select id, labels, annotations, severity, alertname
      from sre_alert_instances
      where status = 'firing' and automation_at is null and not flapping
        and not ${silencedPredicate('labels')}
      order by id
      limit ${batch}
      for update skip locked
    ),
    marked as (
      update sre_alert_instances a set automation_at = now() from pending p where a.id = p.id returning a.id
    ),
    matched as (
      select distinct on (p.id)
        p.id as alert_id,
        r.id as rule_id,
        r.id::text || '|' || coalesce((select string_agg(k.name || '=' || coalesce(p.labels->>k.name, ''), ',' order by k.ord)
                                       from unnest(r.group_by) with ordinality as k(name, ord)), '') as group_key,
        coalesce(r.incident_severity, nullif(p.severity, ''), 'warning') as severity,
        coalesce(nullif(p.alertname, ''), 'Alert') || coalesce(': ' || (p.annotations->>'summary'), '') as title,
        (select coalesce(jsonb_object_agg(k, p.labels->>k), '{}'::jsonb) from unnest(r.group_by) as k where p.labels->>k is not null) as group_labels
      from pending p
      join sre_incident_rules r on r.enabled and ${matchPredicate('r.matchers', 'r.severities', 'p.labels')}
      order by p.id, r.position, r.created_at
    )
    select p.id, m.rule_id, m.group_key, m.severity, m.title, m.group_labels, (select count(*) from marked) as claimed
    from pending p left join matched m on m.alert_id = p.id
  `);
  return rows as Pending[];
}

/** Opens one incident per new grouping key (an open incident of the key wins); returns the new incidents' ids. */
export async function openIncidents(trx: Knex, matched: Pending[], trackerStatus: string): Promise<string[]> {
  if (!matched.length) return [];
  const { rows } = await trx.raw(
    `
    with g as (
      select distinct on (group_key) *
      from jsonb_to_recordset(:groups::jsonb) as x(group_key text, rule_id uuid, severity text, title text, group_labels jsonb)
      order by group_key
    ),
    ins as (
      insert into sre_incidents (title, severity, origin, rule_id, group_key, labels, created_by, tracker_status)
      select title, severity, 'alert', rule_id, group_key, group_labels, 'rule:' || rule_id, :trackerStatus from g order by group_key
      on conflict (group_key) where group_key is not null and status in ('open', 'acknowledged') do nothing
      returning id, rule_id, title
    ),
    tl as (
      insert into sre_incident_timeline (incident_id, kind, actor, message, data, at)
      select id, :kind::text, 'rule:' || rule_id, title, jsonb_build_object('origin', 'alert'), clock_timestamp() from ins
    )
    select id from ins
    `,
    { groups: JSON.stringify(matched), trackerStatus, kind: TimelineKind.Created },
  );
  return (rows as Array<{ id: string }>).map((r) => r.id);
}

/** Attaches each matched alert to the open incident of its grouping key, with a timeline row. */
export async function attachToIncidents(trx: Knex, matched: Pending[]): Promise<void> {
  if (!matched.length) return;
  await trx.raw(
    `
    with m as (select * from jsonb_to_recordset(:matched::jsonb) as x(id uuid, group_key text)),
    att as (
      update sre_alert_instances a set incident_id = i.id
      from m join sre_incidents i on i.group_key = m.group_key and i.status in ('open', 'acknowledged')
      where a.id = m.id
      returning a.id, a.incident_id, a.fingerprint, a.alertname
    )
    insert into sre_incident_timeline (incident_id, kind, actor, message, data, at)
    select incident_id, :kind::text, 'system:incident-rules', alertname, jsonb_build_object('alert_id', id, 'fingerprint', fingerprint), clock_timestamp()
    from att
    `,
    { matched: JSON.stringify(matched.map((m) => ({ id: m.id, group_key: m.group_key }))), kind: TimelineKind.AlertAttached },
  );
}

/** Queues one automatic execution per matching runbook and alert (the unique index keeps it to one ever). */
export async function queueRunbooks(trx: Knex, alertIds: string[]): Promise<string[]> {
  if (!alertIds.length) return [];
  const { rows } = await trx.raw(
    `
    with p as (select id, labels, incident_id, fingerprint from sre_alert_instances where id = any(:ids::uuid[])),
    ex as (
      insert into sre_runbook_executions (runbook_id, alert_id, incident_id, trigger, triggered_by)
      select rb.id, p.id, p.incident_id, 'alert', 'alert:' || p.fingerprint
      from p join sre_runbooks rb on rb.enabled and rb.auto_trigger and ${matchPredicate('rb.matchers', 'rb.severities', 'p.labels')}
      on conflict (runbook_id, alert_id) where trigger = 'alert' do nothing
      returning id, runbook_id, incident_id, alert_id
    ),
    h as (
      insert into sre_runbook_execution_history (execution_id, from_status, to_status, detail, at)
      select id, null, 'queued', 'alert ' || alert_id, clock_timestamp() from ex
    ),
    tl as (
      insert into sre_incident_timeline (incident_id, kind, actor, message, data, at)
      select incident_id, :kind::text, 'runbook:' || runbook_id, 'execution queued',
             jsonb_build_object('execution_id', id, 'runbook_id', runbook_id, 'status', 'queued'), clock_timestamp()
      from ex where incident_id is not null
    )
    select id from ex
    `,
    { ids: alertIds, kind: TimelineKind.RunbookExecution },
  );
  return (rows as Array<{ id: string }>).map((r) => r.id);
}
