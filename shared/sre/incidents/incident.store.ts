/**
 * The incident aggregate's store: sre_incidents, their tracker links (sre_incident_issue_links) and
 * timeline (sre_incident_timeline). Other aggregates add timeline entries through addTimeline.
 */
import type { Knex } from 'knex';
import { db, isUniqueViolation } from '../../db/index.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { paged, type OffsetPage } from '../listing.js';

export const TABLE = 'sre_incidents';
export const TIMELINE = 'sre_incident_timeline';
export const LINKS = 'sre_incident_issue_links';

export type IncidentStatus = 'open' | 'acknowledged' | 'resolved' | 'closed';

/** The kinds of timeline entries, named once: writers say `TimelineKind.StatusChanged`, the API lists `timelineKinds`. */
export const TimelineKind = {
  Created: 'created',
  AlertAttached: 'alert_attached',
  StatusChanged: 'status_changed',
  Updated: 'updated',
  Comment: 'comment',
  AgentAction: 'agent_action',
  RunbookExecution: 'runbook_execution',
  Escalation: 'escalation',
  Ticket: 'ticket',
} as const;
export type TimelineKind = (typeof TimelineKind)[keyof typeof TimelineKind];
export const timelineKinds = Object.values(TimelineKind) as [TimelineKind, ...TimelineKind[]];

/**
 * Allowed moves: open → acknowledged → resolved → closed (an open incident may be resolved directly);
 * a resolved or closed incident may be reopened (→ open).
 */
export const incidentTransitions: Record<IncidentStatus, IncidentStatus[]> = {
  open: ['acknowledged', 'resolved'],
  acknowledged: ['resolved'],
  resolved: ['closed', 'open'],
  closed: ['open'],
};

interface Row {
  id: string;
  title: string;
  description: string;
  severity: string;
  status: IncidentStatus;
  origin: 'manual' | 'alert';
  rule_id: string | null;
  group_key: string | null;
  labels: Record<string, string>;
  created_by: string;
  assignee: string | null;
  tracker_status: 'pending' | 'created' | 'failed' | 'disabled';
  tracker_error: string | null;
  acknowledged_at: Date | null;
  resolved_at: Date | null;
  closed_at: Date | null;
  escalated_at: Date | null;
  created_at: Date;
  updated_at: Date;
  issue_iid: number | null;
  issue_web_url: string | null;
  issue_project_id: string | null;
  alert_count: number;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function toDomain(r: Row) {
  return {
    id: r.id,
    title: r.title,
    description: r.description,
    severity: r.severity,
    status: r.status,
    origin: r.origin,
    rule_id: r.rule_id,
    group_key: r.group_key,
    labels: r.labels,
    created_by: r.created_by,
    assignee: r.assignee,
    alert_count: r.alert_count,
    issue: {
      status: r.tracker_status,
      error: r.tracker_error,
      project_id: r.issue_project_id,
      iid: r.issue_iid,
      web_url: r.issue_web_url,
    },
    acknowledged_at: iso(r.acknowledged_at),
    resolved_at: iso(r.resolved_at),
    closed_at: iso(r.closed_at),
    escalated_at: iso(r.escalated_at),
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}
export type Incident = ReturnType<typeof toDomain>;

const selectIncidents = (k: Knex) =>
  k(`${TABLE} as i`)
    .leftJoin(`${LINKS} as l`, 'l.incident_id', 'i.id')
    .select(
      'i.*',
      'l.iid as issue_iid',
      'l.web_url as issue_web_url',
      'l.project_id as issue_project_id',
      k.raw('(select count(*) from sre_alert_instances a where a.incident_id = i.id)::int as alert_count'),
    );

export interface IncidentFilter {
  status?: IncidentStatus[];
  severity?: string[];
  source?: 'manual' | 'alert';
  label?: Record<string, string>;
  since?: string;
  until?: string;
  limit: number;
  offset: number;
}

export async function listIncidents(f: IncidentFilter): Promise<OffsetPage<Incident>> {
  const q = selectIncidents(db());
  if (f.status?.length) q.whereIn('i.status', f.status);
  if (f.severity?.length) q.whereIn('i.severity', f.severity);
  if (f.source) q.where('i.origin', f.source);
  if (f.label && Object.keys(f.label).length) q.whereRaw('i.labels @> ?::jsonb', [JSON.stringify(f.label)]);
  return paged<Row, Incident>(q, { ...f, orderBy: 'i.created_at desc, i.id', timeColumn: 'i.created_at' }, toDomain);
}

export async function getIncident(id: string, k: Knex = db()): Promise<Incident> {
  const row = (await selectIncidents(k).where('i.id', id).first()) as Row | undefined;
  if (!row) throw new NotFoundError(`No incident ${id}.`);
  return toDomain(row);
}

export interface NewIncident {
  title: string;
  description?: string;
  severity?: string;
  labels?: Record<string, string>;
  created_by: string;
  tracker_status: Row['tracker_status'];
}

export async function insertIncident(trx: Knex, input: NewIncident): Promise<string> {
  const [row] = await trx(TABLE)
    .insert({ ...input, origin: 'manual', description: input.description ?? '', severity: input.severity ?? 'warning', labels: JSON.stringify(input.labels ?? {}) })
    .returning('id');
  return (row as { id: string }).id;
}

export interface TimelineEntry {
  incident_id: string;
  kind: TimelineKind;
  actor: string;
  message?: string;
  data?: Record<string, unknown>;
}

export async function addTimeline(k: Knex, entries: TimelineEntry[]): Promise<void> {
  if (!entries.length) return;
  await k(TIMELINE).insert(
    entries.map((e) => ({ incident_id: e.incident_id, kind: e.kind, actor: e.actor, message: e.message ?? '', data: JSON.stringify(e.data ?? {}), at: k.raw('clock_timestamp()') })),
  );
}

interface TimelineRow {
  id: string;
  incident_id: string;
  kind: TimelineKind;
  actor: string;
  message: string;
  data: Record<string, unknown>;
  at: Date;
}
const timelineToDomain = (r: TimelineRow) => ({ id: r.id, incident_id: r.incident_id, kind: r.kind, actor: r.actor, message: r.message, data: r.data, at: r.at.toISOString() });
export type TimelineItem = ReturnType<typeof timelineToDomain>;

export async function listTimeline(id: string, f: { kind?: TimelineKind[]; limit: number; offset: number; since?: string; until?: string }): Promise<OffsetPage<TimelineItem>> {
  await getIncident(id);
  const q = db()<TimelineRow>(TIMELINE).where({ incident_id: id }).select('*');
  if (f.kind?.length) q.whereIn('kind', f.kind);
  return paged<TimelineRow, TimelineItem>(q, { ...f, orderBy: 'at, id', timeColumn: 'at' }, timelineToDomain);
}

/** Moves an incident through its lifecycle with a timeline row; 409 naming the allowed moves. */
export async function transitionIncident(trx: Knex, id: string, to: IncidentStatus, by: string, note?: string): Promise<void> {
  const row = (await trx<Row>(TABLE).where({ id }).forUpdate().first()) as Row | undefined;
  if (!row) throw new NotFoundError(`No incident ${id}.`);
  const allowed = incidentTransitions[row.status];
  if (!allowed.includes(to)) {
    throw new ConflictError(`An incident that is ${row.status} cannot become ${to}.`, [], { current_status: row.status, allowed_next_states: allowed });
  }
  const stamp = { acknowledged: 'acknowledged_at', resolved: 'resolved_at', closed: 'closed_at', open: undefined }[to];
  // Reopening clears the resolution; the timeline keeps when it had been resolved and closed.
  const reopened = to === 'open' ? { resolved_at: null, closed_at: null } : {};
  try {
    await trx(TABLE).where({ id }).update({ status: to, ...reopened, ...(stamp ? { [stamp]: trx.fn.now() } : {}) });
  } catch (err) {
    if (isUniqueViolation(err, 'sre_incidents_open_group_key')) {
      throw new ConflictError('Another open incident has the same grouping key; its alerts are grouped there.', [], { current_status: row.status });
    }
    throw err;
  }
  await addTimeline(trx, [{ incident_id: id, kind: TimelineKind.StatusChanged, actor: by, message: note ?? `${row.status} → ${to}`, data: { from: row.status, to } }]);
}

/** Marks an incident escalated (again) and records it; returns the timeline data sent to the notification webhook. */
export async function markEscalated(trx: Knex, id: string, by: string, reason: string): Promise<void> {
  const [row] = await trx(TABLE).where({ id }).update({ escalated_at: trx.fn.now() }).returning('id');
  if (!row) throw new NotFoundError(`No incident ${id}.`);
  await addTimeline(trx, [{ incident_id: id, kind: TimelineKind.Escalation, actor: by, message: reason, data: { reason } }]);
}

/** Open incidents unacknowledged for longer than `afterSeconds` and not yet escalated: marked escalated, ids returned. */
export async function escalateOverdue(afterSeconds: number): Promise<string[]> {
  return db().transaction(async (trx) => {
    const { rows } = await trx.raw(
      `update sre_incidents set escalated_at = now()
       where status = 'open' and escalated_at is null and created_at < now() - make_interval(secs => ?)
       returning id`,
      [afterSeconds],
    );
    const ids = (rows as Array<{ id: string }>).map((r) => r.id);
    await addTimeline(
      trx,
      ids.map((id) => ({ incident_id: id, kind: TimelineKind.Escalation, actor: 'system:escalation', message: `unacknowledged for more than ${afterSeconds} s`, data: { automatic: true, after_seconds: afterSeconds } })),
    );
    return ids;
  });
}

/** Incidents whose tracker issue is still missing (pending for over `olderThanSeconds`, or failed). */
export async function incidentsMissingIssue(olderThanSeconds: number): Promise<string[]> {
  const rows = await db()(TABLE)
    // 'failed' is final (a permanent refusal or retries exhausted): re-posting it every tick repeats the failure.
    .where('tracker_status', 'pending')
    .where('created_at', '<', db().raw('now() - make_interval(secs => ?)', [olderThanSeconds]))
    .select('id')
    .limit(500);
  return rows.map((r: { id: string }) => r.id);
}

/** Records the tracker issue of an incident (idempotent) with its timeline row. */
export async function recordIssue(incidentId: string, issue: { project_id: string; iid: number; web_url: string }): Promise<void> {
  await db().transaction(async (trx) => {
    const inserted = await trx(LINKS).insert({ incident_id: incidentId, ...issue }).onConflict('incident_id').ignore().returning('id');
    await trx(TABLE).where({ id: incidentId }).update({ tracker_status: 'created', tracker_error: null });
    if (inserted.length) {
      await addTimeline(trx, [{ incident_id: incidentId, kind: TimelineKind.Ticket, actor: 'system:issue-tracker', message: `issue #${issue.iid} created`, data: issue }]);
    }
  });
}

/** Records a failed attempt to create the tracker issue; `final` marks it failed (a scheduled retry picks it up again). */
export async function recordIssueFailure(incidentId: string, error: string, final: boolean): Promise<void> {
  await db().transaction(async (trx) => {
    await trx(TABLE).where({ id: incidentId }).whereNot('tracker_status', 'created').update({ tracker_error: error, ...(final ? { tracker_status: 'failed' } : {}) });
    if (final) await addTimeline(trx, [{ incident_id: incidentId, kind: TimelineKind.Ticket, actor: 'system:issue-tracker', message: `issue creation failed: ${error}`, data: { error } }]);
  });
}

/** The raw incident row fields the ticket and escalation jobs need. */
export async function incidentForNotification(id: string) {
  const incident = await getIncident(id);
  const alerts = await db()('sre_alert_instances').where({ incident_id: id }).select('id', 'alertname', 'severity', 'labels', 'annotations', 'status').orderBy('created_at').limit(50);
  return { incident, alerts };
}

export interface IncidentChanges {
  title?: string;
  severity?: string;
  assignee?: string | null;
}

/** Changes title, severity and/or assignee, one `updated` timeline entry per changed field; returns the changed fields. */
export async function updateIncidentFields(trx: Knex, id: string, changes: IncidentChanges, by: string): Promise<string[]> {
  const row = (await trx<Row>(TABLE).where({ id }).forUpdate().first()) as Row | undefined;
  if (!row) throw new NotFoundError(`No incident ${id}.`);
  const changed = (Object.keys(changes) as Array<keyof IncidentChanges>).filter((f) => changes[f] !== undefined && changes[f] !== row[f]);
  if (!changed.length) return [];
  await trx(TABLE).where({ id }).update(Object.fromEntries(changed.map((f) => [f, changes[f]])));
  await addTimeline(
    trx,
    changed.map((f) => ({ incident_id: id, kind: TimelineKind.Updated, actor: by, message: `${f}: ${row[f] ?? '(none)'} → ${changes[f] ?? '(none)'}`, data: { field: f, from: row[f], to: changes[f] } })),
  );
  return changed;
}

/** The tracker issue of an incident, if one was created. */
export async function issueLink(incidentId: string, k: Knex = db()): Promise<{ project_id: string; iid: number; web_url: string } | undefined> {
  return k(LINKS).where({ incident_id: incidentId }).first('project_id', 'iid', 'web_url');
}
