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
  attachAlerts,
  escalateOverdue,
  getIncident,
  incidentForNotification,
  incidentsMissingIssue,
  insertIncident,
  markEscalated,
  recordIssue,
  recordIssueFailure,
  transitionIncident,
  type Incident,
  type IncidentStatus,
  type TimelineKind,
} from './incident.store.js';
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
    await addTimeline(trx, [{ incident_id: incidentId, kind: 'created', actor: input.created_by, message: input.title, data: { origin: 'manual' } }]);
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

export async function moveIncident(id: string, to: IncidentStatus, by: string, note?: string): Promise<Incident> {
  await db().transaction((trx) => transitionIncident(trx, id, to, by, note));
  publishSreEvent('incident.changed', { id, change: 'status', status: to, by });
  return getIncident(id);
}

/** A comment or an agent action posted by API. */
export async function postTimeline(id: string, entry: { kind: Extract<TimelineKind, 'comment' | 'agent_action'>; actor: string; message: string; data?: Record<string, unknown> }) {
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
export async function incidentsTick(slot: string): Promise<{ escalated: number; tickets: number }> {
  const { escalationAfterSeconds } = config().sre;
  const escalated = await escalateOverdue(escalationAfterSeconds);
  if (escalated.length) publishSreEvent('incident.changed', { ids: escalated, change: 'escalated', by: 'system:escalation' });
  const now = new Date().toISOString();
  for (const id of escalated) {
    await enqueue('sre.incident-escalation-notify', { incident_id: id, reason: `unacknowledged for more than ${escalationAfterSeconds} s`, escalated_by: 'system:escalation', escalated_at: now });
  }
  const missing = issueTracker() ? await incidentsMissingIssue(120) : [];
  for (const id of missing) await enqueue('sre.incident-ticket', { incident_id: id, slot });
  return { escalated: escalated.length, tickets: missing.length };
}

/** Job: creates the tracker issue of an incident (once: an existing link ends the job). */
export async function createTicket(incidentId: string, attempt: { made: number; max: number }): Promise<{ iid: number; web_url: string } | null> {
  const tracker = issueTracker();
  if (!tracker) return null;
  const { incident, alerts } = await incidentForNotification(incidentId);
  if (incident.issue.iid !== null) return { iid: incident.issue.iid, web_url: incident.issue.web_url! };
  const lines = [
    incident.description,
    `**Severity:** ${incident.severity}  `,
    `**Incident:** ${incident.id}  `,
    `**Opened:** ${incident.created_at}`,
    ...(alerts.length ? ['', '**Alerts:**', ...alerts.map((a) => `- ${a.alertname} (${a.severity || 'no severity'}) ${JSON.stringify(a.labels)}`)] : []),
  ];
  try {
    const issue = await tracker.createIssue({ title: `[${incident.severity}] ${incident.title}`, description: lines.join('\n').trim(), labels: ['incident', `severity::${incident.severity}`] });
    const link = { project_id: String(issue.project_id ?? config().sre.issueTracker.projectId), iid: issue.iid, web_url: issue.web_url };
    await recordIssue(incidentId, link);
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
