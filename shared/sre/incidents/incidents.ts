/** Incident lifecycle: manual creation, status moves, timeline entries, tracker issues and escalations. */
import { UnrecoverableError } from 'bullmq';
import { config } from '../../config.js';
import { db } from '../../db/index.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { enqueue } from '../../queues.js';
import { issueTracker } from '../../clients/gitlab.js';
import { ExternalHttpError } from '../../clients/http.js';
import {
  addTimeline,
  escalateOverdue,
  getIncident,
  incidentForNotification,
  incidentsMissingIssue,
  insertIncident,
  issueLink,
  updateIncidentFields,
  type IncidentChanges,
  markEscalated,
  recordIssue,
  recordIssueFailure,
  transitionIncident,
  type Incident,
  type IncidentStatus,
  TimelineKind,
} from './incident.store.js';
import { attachAlerts } from './attach-alerts.sql.js';
import { publishSreEvent } from '../events.js';

/** Creates an incident by API (optionally with alerts attached) and queues its tracker issue. */
export async function createIncident(input: {
  title: string;
  description?: string;
  severity?: string;
  labels?: Record<string, string>;
  alert_ids?: string[];
  created_by: string;
}): Promise<Incident> {
  const tracked = issueTracker() !== null;
  const id = await db().transaction(async (trx) => {
    const incidentId = await insertIncident(trx, {
      title: input.title,
      description: input.description,
      severity: input.severity,
      labels: input.labels,
      created_by: input.created_by,
      tracker_status: tracked ? 'pending' : 'disabled',
    });
    await addTimeline(trx, [{ incident_id: incidentId, kind: TimelineKind.Created, actor: input.created_by, message: input.title, data: { origin: 'manual' } }]);
    const ids = [...new Set(input.alert_ids ?? [])];
    if (ids.length) {
      const found = await trx('sre_alert_instances').whereIn('id', ids).pluck('id');
      const missing = ids.filter((a) => !found.includes(a));
      if (missing.length) throw new ValidationError('Unknown alert ids.', missing.map((a) => ({ path: `body.alert_ids.${ids.indexOf(a)}`, message: `no alert ${a}` })));
      await attachAlerts(trx, incidentId, ids, input.created_by);
    }
    return incidentId;
  });
  publishSreEvent('incident.opened', { id, title: input.title, by: input.created_by });
  if (tracked) await enqueue('sre.incident-ticket', { incident_id: id });
  return getIncident(id);
}

/**
 * Moves an incident through its lifecycle. Resolving or closing closes its tracker issue with a
 * comment, reopening reopens it (a queued job, retried while the tracker is down).
 */
export async function moveIncident(id: string, to: IncidentStatus, by: string, note?: string): Promise<Incident> {
  await db().transaction((trx) => transitionIncident(trx, id, to, by, note));
  if (issueTracker() && to !== 'acknowledged') {
    await enqueue('sre.incident-ticket-sync', { incident_id: id, event: to === 'open' ? 'reopen' : 'close', status: to, by, ...(note ? { note } : {}) });
  }
  publishSreEvent('incident.changed', { id, change: 'status', status: to, by });
  return getIncident(id);
}

/** Changes title, severity and/or assignee (each change an `updated` timeline entry). */
export async function updateIncident(id: string, changes: IncidentChanges, by: string): Promise<Incident> {
  const changed = await db().transaction((trx) => updateIncidentFields(trx, id, changes, by));
  if (changed.length) publishSreEvent('incident.changed', { id, change: 'fields', fields: changed, by });
  return getIncident(id);
}

/**
 * Job: brings the tracker issue in step with the incident: state first (close/reopen is idempotent in
 * GitLab, so a retry never doubles it), then the comment. Without an issue yet nothing is done: the
 * ticket job applies the incident's status when it creates the issue.
 */
export async function syncTicket(p: { incident_id: string; event: 'close' | 'reopen'; status: string; by: string; note?: string }): Promise<{ synced: boolean }> {
  const tracker = issueTracker();
  const link = tracker ? await issueLink(p.incident_id) : undefined;
  if (!tracker || !link) return { synced: false };
  try {
    await tracker.setIssueState(link.project_id, link.iid, p.event);
    const verb = p.event === 'reopen' ? 'reopened' : p.status;
    await tracker.addNote(link.project_id, link.iid, `Incident ${verb} by ${p.by}${p.note ? `: ${p.note}` : '.'}`);
  } catch (err) {
    if (err instanceof ExternalHttpError && err.permanent) throw new UnrecoverableError(err.message);
    throw err;
  }
  await addTimeline(db(), [{ incident_id: p.incident_id, kind: TimelineKind.Ticket, actor: 'system:issue-tracker', message: `issue #${link.iid} ${p.event === 'close' ? 'closed' : 'reopened'}`, data: { event: p.event, iid: link.iid } }]);
  return { synced: true };
}

/** A comment or an agent action posted by API. */
export async function postTimeline(id: string, entry: { kind: typeof TimelineKind.Comment | typeof TimelineKind.AgentAction; actor: string; message: string; data?: Record<string, unknown> }) {
  await getIncident(id);
  await addTimeline(db(), [{ incident_id: id, ...entry }]);
  publishSreEvent('incident.changed', { id, change: 'timeline', kind: entry.kind, by: entry.actor });
}

/** Attaches alerts to an incident by API. */
export async function attachAlertsByApi(id: string, alertIds: string[], by: string): Promise<Incident> {
  await getIncident(id);
  await db().transaction(async (trx) => {
    const found = await trx('sre_alert_instances').whereIn('id', alertIds).pluck('id');
    const missing = alertIds.filter((a) => !found.includes(a));
    if (missing.length) throw new NotFoundError(`No alert ${missing.join(', ')}.`);
    await attachAlerts(trx, id, alertIds, by);
  });
  publishSreEvent('incident.changed', { id, change: 'alerts', alert_ids: alertIds.slice(0, 100), by });
  return getIncident(id);
}

/** Escalates to a human by API: recorded on the timeline and sent to the notification webhook. */
export async function escalateIncident(id: string, by: string, reason: string): Promise<Incident> {
  await db().transaction((trx) => markEscalated(trx, id, by, reason));
  publishSreEvent('incident.changed', { id, change: 'escalated', by });
  await enqueue('sre.incident-escalation-notify', { incident_id: id, reason, escalated_by: by, escalated_at: new Date().toISOString() });
  return getIncident(id);
}

/** Scheduled: escalates overdue incidents and re-queues tracker issues that are still missing. */
export async function incidentsTick(_slot: string): Promise<{ escalated: number; tickets: number }> {
  const { escalationAfterSeconds } = config().sre;
  const escalated = await escalateOverdue(escalationAfterSeconds);
  if (escalated.length) publishSreEvent('incident.changed', { ids: escalated, change: 'escalated', by: 'system:escalation' });
  const now = new Date().toISOString();
  for (const id of escalated) {
    await enqueue('sre.incident-escalation-notify', { incident_id: id, reason: `unacknowledged for more than ${escalationAfterSeconds} s`, escalated_by: 'system:escalation', escalated_at: now });
  }
  const missing = issueTracker() ? await incidentsMissingIssue(120) : [];
  // The job id is the incident's (queues.ts): while its job is still retrying, this adds nothing.
  for (const id of missing) await enqueue('sre.incident-ticket', { incident_id: id });
  return { escalated: escalated.length, tickets: missing.length };
}

/** The line of an issue's description that names its incident: how a retry finds an issue an earlier attempt created. */
export const incidentMarker = (incidentId: string) => `**Incident:** ${incidentId}`;

/**
 * Job: creates the tracker issue of an incident, once: an existing link ends the job, and a retry
 * (`attempt.retry`: an earlier attempt failed or its worker died, maybe after GitLab created the
 * issue) first looks for an issue carrying the incident's marker and links that one instead.
 */
export async function createTicket(incidentId: string, attempt: { made: number; max: number; retry?: boolean }): Promise<{ iid: number; web_url: string } | null> {
  const tracker = issueTracker();
  if (!tracker) return null;
  const { incident, alerts } = await incidentForNotification(incidentId);
  if (incident.issue.iid !== null) return { iid: incident.issue.iid, web_url: incident.issue.web_url! };
  if (attempt.retry) {
    const existing = await tracker.findIssueByDescription(incidentMarker(incidentId));
    if (existing) {
      const link = { project_id: String(existing.project_id ?? config().sre.issueTracker.projectId), iid: existing.iid, web_url: existing.web_url };
      await recordIssue(incidentId, link);
      return link;
    }
  }
  const lines = [
    incident.description,
    `**Severity:** ${incident.severity}  `,
    `${incidentMarker(incident.id)}  `,
    `**Opened:** ${incident.created_at}`,
    ...(alerts.length ? ['', '**Alerts:**', ...alerts.map((a) => `- ${a.alertname} (${a.severity || 'no severity'}) ${JSON.stringify(a.labels)}`)] : []),
  ];
  try {
    const issue = await tracker.createIssue({ title: `[${incident.severity}] ${incident.title}`, description: lines.join('\n').trim(), labels: ['incident', `severity::${incident.severity}`] });
    const link = { project_id: String(issue.project_id ?? config().sre.issueTracker.projectId), iid: issue.iid, web_url: issue.web_url };
    await recordIssue(incidentId, link);
    // Resolved or closed before its issue existed: the sync job had nothing to close then.
    const now = await getIncident(incidentId);
    if (now.status === 'resolved' || now.status === 'closed') await enqueue('sre.incident-ticket-sync', { incident_id: incidentId, event: 'close', status: now.status, by: 'system:issue-tracker' });
    return link;
  } catch (err) {
    const permanent = err instanceof ExternalHttpError && err.permanent;
    await recordIssueFailure(incidentId, (err as Error).message, permanent || attempt.made + 1 >= attempt.max);
    throw permanent ? new UnrecoverableError((err as Error).message) : err;
  }
}

/** Job: POSTs an escalation to ESCALATION_WEBHOOK_URL (retried on failure); a no-op when none is configured. */
export async function notifyEscalation(p: { incident_id: string; reason: string; escalated_by: string; escalated_at: string }): Promise<{ sent: boolean }> {
  const url = config().sre.escalationWebhookUrl;
  if (!url) return { sent: false };
  const { incident, alerts } = await incidentForNotification(p.incident_id);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ event: 'incident.escalated', reason: p.reason, escalated_by: p.escalated_by, escalated_at: p.escalated_at, incident, alerts }),
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`escalation webhook answered ${res.status}`);
  return { sent: true };
}
