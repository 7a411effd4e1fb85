/** /api/v1/incidents: incidents, their timeline, escalation, tracker issue, and the rules that open them from alerts. */
import { ApiRouter } from '../../routing.js';
import { getIncident, listIncidents, listTimeline } from '../../../shared/sre/incidents/incident.store.js';
import { attachAlertsByApi, createIncident, escalateIncident, moveIncident, postTimeline, updateIncident } from '../../../shared/sre/incidents/incidents.js';
import { createRule, deleteRule, getRule, listRules, updateRule } from '../../../shared/sre/incidents/incident-rule.store.js';
import { assertMatchersCompile } from '../../../shared/sre/automation/matchers.js';
import { listAlerts } from '../../../shared/sre/alerts/alert.store.js';
import * as s from './incidents.schemas.js';
import { idParams, actorBody } from '../common.schemas.js';
import { alertPage, alertQuery } from '../alerts/alerts.schemas.js';
import { actorOf } from '../../auth/browser-session.js';
import { ValidationError } from '../../../shared/errors.js';

const tags = ['incidents'];
const lifecycle = [
  'Statuses: open → acknowledged → resolved → closed (open → resolved directly too); a resolved or closed incident can be reopened (→ open;',
  '409 when another open incident already has its grouping key). Not allowed from the current status → 409 naming `allowed_next_states`.',
  'Each move is a `status_changed` timeline entry. With an issue tracker configured, resolving or closing closes the incident\'s issue and',
  'comments on it (who, and the note), reopening reopens it, by a queued job retried while the tracker is down; each sync is a `ticket` timeline',
  'entry. An incident resolved before its issue exists gets a closed issue once it is created.',
].join(' ');

export function incidentRoutes(): ApiRouter {
  const router = new ApiRouter();
  router
    .route({
      method: 'get',
      path: '/api/v1/incidents/rules',
      tags,
      summary: 'List incident rules',
      description: 'Rules turn firing alerts into incidents. Evaluated by `position` (then age); the first rule whose matchers and severities fit an alert wins. The grouping key is the rule plus the values of its `group_by` labels: alerts of one key join the open (or acknowledged) incident of that key instead of opening another. Alerts that are flapping wait until stable for FLAP_WINDOW.',
      auth: 'key-or-sre',
      request: { query: s.ruleQuery },
      responses: { 200: { description: 'a page of rules', schema: s.rulePage } },
      handler: ({ query }) => listRules(query),
    })
    .route({
      method: 'post',
      path: '/api/v1/incidents/rules',
      tags,
      summary: 'Create an incident rule',
      auth: 'key-or-sre',
      request: { body: s.ruleInput },
      responses: { 201: { description: 'created', schema: s.incidentRule } },
      errors: { 409: 'A rule of that name exists' },
      handler: async ({ body }) => {
        await assertMatchersCompile(body.matchers);
        return createRule(body);
      },
    })
    .route({
      method: 'get',
      path: '/api/v1/incidents/rules/{id}',
      tags,
      summary: 'Get an incident rule',
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 200: { description: 'the rule', schema: s.incidentRule } },
      handler: ({ params }) => getRule(params.id),
    })
    .route({
      method: 'patch',
      path: '/api/v1/incidents/rules/{id}',
      tags,
      summary: 'Change an incident rule',
      description: 'Applies to alerts that fire from now on.',
      auth: 'key-or-sre',
      request: { params: idParams, body: s.rulePatch },
      responses: { 200: { description: 'changed', schema: s.incidentRule } },
      errors: { 409: 'A rule of that name exists' },
      handler: async ({ params, body }) => {
        if (body.matchers) await assertMatchersCompile(body.matchers);
        return updateRule(params.id, body);
      },
    })
    .route({
      method: 'delete',
      path: '/api/v1/incidents/rules/{id}',
      tags,
      summary: 'Delete an incident rule',
      description: 'Incidents it opened stay (their rule_id becomes null).',
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 204: { description: 'deleted' } },
      handler: async ({ params }, ctx) => {
        await deleteRule(params.id);
        ctx.status = 204;
      },
    })
    .route({
      method: 'get',
      path: '/api/v1/incidents',
      tags,
      summary: 'List incidents',
      description: 'Newest first. `source` is the origin (manual or alert); `since`/`until` filter on created_at; `label` on the incident labels (the grouping labels for incidents from alerts).',
      auth: 'key-or-sre',
      request: { query: s.incidentQuery },
      responses: { 200: { description: 'a page of incidents', schema: s.incidentPage } },
      handler: ({ query }) => listIncidents(query),
    })
    .route({
      method: 'post',
      path: '/api/v1/incidents',
      tags,
      summary: 'Create an incident',
      description: 'Creates the incident (status open) and queues its issue in the issue tracker (GitLab, POST /projects/:id/issues); `issue.status` is pending until the issue exists, `disabled` when no tracker is configured. A tracker outage never blocks or loses the incident: the job retries with backoff, and a scheduled tick retries failed ones.',
      auth: 'key-or-sre',
      request: { body: s.incidentCreate },
      responses: { 201: { description: 'created', schema: s.incident } },
      handler: ({ body }, ctx) => createIncident({ ...body, created_by: actorOf(ctx, body.by) }),
    })
    .route({
      method: 'get',
      path: '/api/v1/incidents/{id}',
      tags,
      summary: 'Get an incident',
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 200: { description: 'the incident', schema: s.incident } },
      handler: ({ params }) => getIncident(params.id),
    })
    .route({
      method: 'patch',
      path: '/api/v1/incidents/{id}',
      tags,
      summary: 'Change title, severity or assignee',
      description: 'Each changed field is an `updated` timeline entry (`data`: field, from, to); its actor is the signed-in person for a browser session, else `by` as for the other incident actions. Unchanged values write nothing. Allowed in any status. The tracker issue keeps its original title.',
      auth: 'key-or-sre',
      request: { params: idParams, body: s.incidentPatch },
      responses: { 200: { description: 'the incident', schema: s.incident } },
      handler: ({ params, body }, ctx) => updateIncident(params.id, { title: body.title, severity: body.severity, assignee: body.assignee }, actorOf(ctx, body.by)),
    })
    .route({
      method: 'get',
      path: '/api/v1/incidents/{id}/alerts',
      tags,
      summary: "An incident's alerts",
      auth: 'key-or-sre',
      request: { params: idParams, query: alertQuery.omit({ incident_id: true }) },
      responses: { 200: { description: 'a page of alerts', schema: alertPage } },
      handler: async ({ params, query }) => {
        await getIncident(params.id);
        return listAlerts({ ...query, incident_id: params.id });
      },
    })
    .route({
      method: 'post',
      path: '/api/v1/incidents/{id}/alerts',
      tags,
      summary: 'Attach alerts to an incident',
      description: 'Each attached alert is an `alert_attached` timeline entry; an alert belongs to one incident at a time (attaching moves it).',
      auth: 'key-or-sre',
      request: { params: idParams, body: s.attachBody },
      responses: { 200: { description: 'the incident', schema: s.incident } },
      handler: ({ params, body }, ctx) => attachAlertsByApi(params.id, body.alert_ids, actorOf(ctx, body.by)),
    })
    .route({
      method: 'get',
      path: '/api/v1/incidents/{id}/timeline',
      tags,
      summary: "An incident's timeline",
      description: 'Everything that happened, oldest first: created, alert_attached, status_changed, comment, agent_action, runbook_execution, escalation, ticket.',
      auth: 'key-or-sre',
      request: { params: idParams, query: s.timelineQuery },
      responses: { 200: { description: 'a page of timeline entries', schema: s.timelinePage } },
      handler: ({ params, query }) => listTimeline(params.id, query),
    })
    .route({
      method: 'post',
      path: '/api/v1/incidents/{id}/timeline',
      tags,
      summary: 'Post a comment or an agent action',
      auth: 'key-or-sre',
      request: { params: idParams, body: s.timelinePost },
      responses: { 201: { description: 'recorded', schema: s.timelineRecorded } },
      handler: async ({ params, body }, ctx) => {
        const actor = actorOf(ctx, body.actor);
        if (!actor) throw new ValidationError('The request is invalid: body.actor.', [{ path: 'body.actor', message: 'required with an API key (a browser session records the signed-in person)' }]);
        await postTimeline(params.id, { ...body, actor });
        return { recorded: true as const };
      },
    })
    .route({
      method: 'post',
      path: '/api/v1/incidents/{id}/escalate',
      tags,
      summary: 'Escalate an incident to a human',
      description: 'Recorded on the timeline and POSTed (JSON: event "incident.escalated", reason, escalated_by, escalated_at, incident, alerts) to ESCALATION_WEBHOOK_URL by a queued job with retries. Incidents left open (unacknowledged) for ESCALATION_AFTER seconds are escalated automatically, once. Allowed in any status.',
      auth: 'key-or-sre',
      request: { params: idParams, body: s.escalateBody },
      responses: { 200: { description: 'the incident', schema: s.incident } },
      handler: ({ params, body }, ctx) => escalateIncident(params.id, actorOf(ctx, body.by), body.reason),
    });
  for (const [action, to] of [
    ['acknowledge', 'acknowledged'],
    ['resolve', 'resolved'],
    ['close', 'closed'],
    ['reopen', 'open'],
  ] as const) {
    router.route({
      method: 'post',
      path: `/api/v1/incidents/{id}/${action}`,
      tags,
      summary: `${action[0]!.toUpperCase()}${action.slice(1)} an incident`,
      description: lifecycle,
      auth: 'key-or-sre',
      request: { params: idParams, body: actorBody },
      responses: { 200: { description: `the incident, now ${to}`, schema: s.incident } },
      errors: { 409: 'The incident cannot make this move from its current status' },
      handler: ({ params, body }, ctx) => moveIncident(params.id, to, actorOf(ctx, body.by), body.note),
    });
  }
  return router;
}
