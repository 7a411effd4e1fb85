/** Request and response schemas of the alerting API (alerts, sources, incidents, runbooks). */
import { z, uuid } from '../../shared/zod.js';
import { labelQuery, pageQuery, pageSchema } from '../../shared/sre/alerting/listing.js';
import { matcherSchema } from '../../shared/sre/alerting/matchers.js';

const labels = z.record(z.string(), z.string());
const ts = z.string().openapi({ format: 'date-time' });
export const csv = <const T extends readonly [string, ...string[]]>(values: T) =>
  z
    .string()
    .transform((s) => s.split(',').map((v) => v.trim()).filter(Boolean))
    .pipe(z.array(z.enum(values)))
    .optional()
    .openapi({ description: `comma-separated: ${values.join(', ')}`, type: 'string' });
const csvText = z
  .string()
  .transform((s) => s.split(',').map((v) => v.trim()).filter(Boolean))
  .optional()
  .openapi({ description: 'comma-separated values', type: 'string' });
const bool = z.enum(['true', 'false']).transform((v) => v === 'true').optional().openapi({ type: 'string', enum: ['true', 'false'] });

export const idParams = z.object({ id: uuid() });
export const actorBody = z.object({
  by: z.string().min(1).max(200).default('api').openapi({ description: 'who or what makes the move (user, agent, tool); default "api". A browser session records the signed-in person instead' }),
  note: z.string().max(2000).optional(),
});

// --- sources
export const sourceKind = z.enum(['alertmanager', 'grafana']);
export const alertSource = z
  .object({ id: z.string(), kind: sourceKind, name: z.string(), enabled: z.boolean(), has_own_secret: z.boolean(), webhook_path: z.string(), created_at: ts, updated_at: ts })
  .openapi('AlertSource');
export const sourceCreate = z.object({
  kind: sourceKind,
  name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'must be lowercase letters, digits, - or _ (max 63)'),
  secret: z.string().min(8).max(500).nullable().optional().openapi({ description: 'bearer token / basic-auth password; omitted or null: ALERT_WEBHOOK_TOKEN applies' }),
  enabled: z.boolean().default(true),
});
export const sourcePatch = z
  .object({ secret: z.string().min(8).max(500).nullable().optional(), enabled: z.boolean().optional() })
  .refine((p) => Object.keys(p).length > 0, 'nothing to change');
export const sourceQuery = z.object({ ...pageQuery, kind: sourceKind.optional(), enabled: bool });
export const sourcePage = pageSchema(alertSource, 'AlertSourcePage');

// --- alerts
export const alertStatus = z.enum(['firing', 'acknowledged', 'resolved']);
export const alertInstance = z
  .object({
    id: z.string(),
    source: z.object({ id: z.string(), kind: z.string(), name: z.string() }),
    fingerprint: z.string(),
    status: alertStatus,
    alertname: z.string(),
    severity: z.string(),
    labels,
    annotations: labels,
    values: z.record(z.string(), z.unknown()),
    generator_url: z.string(),
    starts_at: ts.nullable(),
    ends_at: ts.nullable(),
    first_received_at: ts,
    last_received_at: ts,
    occurrence_count: z.number().int(),
    flapping: z.boolean(),
    acknowledged_at: ts.nullable(),
    acknowledged_by: z.string().nullable(),
    resolved_at: ts.nullable(),
    resolved_by: z.string().nullable(),
    incident_id: z.string().nullable(),
    created_at: ts,
    updated_at: ts,
  })
  .openapi('AlertInstance');
export const alertPage = pageSchema(alertInstance, 'AlertInstancePage');
export const alertQuery = z.object({
  ...pageQuery,
  status: csv(['firing', 'acknowledged', 'resolved']),
  severity: csvText,
  source: z.string().optional().openapi({ description: 'source as kind/name, name, or id' }),
  label: labelQuery,
  fingerprint: z.string().optional(),
  flapping: bool,
  incident_id: uuid().optional(),
  q: z.string().min(1).max(200).optional().openapi({ description: 'text matched (case-insensitive) in the alert name, labels and annotations' }),
});
export const alertCountsSchema = z
  .object({
    by_status: z.object({ firing: z.number().int(), acknowledged: z.number().int(), resolved: z.number().int() }),
    by_severity: z.record(z.string(), z.number().int()).openapi({ description: 'live alerts (firing or acknowledged) per severity' }),
  })
  .openapi('AlertCounts');
export const alertHistoryItem = z
  .object({ id: z.string(), alert_id: z.string(), from: alertStatus.nullable(), to: alertStatus, by: z.string(), note: z.string().nullable(), at: ts })
  .openapi('AlertStateChange');
export const alertHistoryPage = pageSchema(alertHistoryItem, 'AlertStateChangePage');
export const pageOnly = z.object(pageQuery);

// --- incidents
export const incidentStatus = z.enum(['open', 'acknowledged', 'resolved', 'closed']);
export const incident = z
  .object({
    id: z.string(),
    title: z.string(),
    description: z.string(),
    severity: z.string(),
    status: incidentStatus,
    origin: z.enum(['manual', 'alert']),
    rule_id: z.string().nullable(),
    group_key: z.string().nullable(),
    labels,
    created_by: z.string(),
    alert_count: z.number().int(),
    issue: z.object({
      status: z.enum(['pending', 'created', 'failed', 'disabled']),
      error: z.string().nullable(),
      project_id: z.string().nullable(),
      iid: z.number().int().nullable(),
      web_url: z.string().nullable(),
    }),
    acknowledged_at: ts.nullable(),
    resolved_at: ts.nullable(),
    closed_at: ts.nullable(),
    escalated_at: ts.nullable(),
    created_at: ts,
    updated_at: ts,
  })
  .openapi('Incident');
export const incidentPage = pageSchema(incident, 'IncidentPage');
export const incidentQuery = z.object({
  ...pageQuery,
  status: csv(['open', 'acknowledged', 'resolved', 'closed']),
  severity: csvText,
  source: z.enum(['manual', 'alert']).optional().openapi({ description: 'origin of the incident' }),
  label: labelQuery,
});
export const incidentCreate = z.object({
  title: z.string().min(1).max(500),
  description: z.string().max(20_000).optional(),
  severity: z.string().min(1).max(50).default('warning'),
  labels: labels.optional(),
  alert_ids: z.array(uuid()).max(1000).optional(),
  by: z.string().min(1).max(200).default('api'),
});
export const timelineKind = z.enum(['created', 'alert_attached', 'status_changed', 'comment', 'agent_action', 'runbook_execution', 'escalation', 'ticket']);
export const timelineItem = z
  .object({ id: z.string(), incident_id: z.string(), kind: timelineKind, actor: z.string(), message: z.string(), data: z.record(z.string(), z.unknown()), at: ts })
  .openapi('IncidentTimelineItem');
export const timelinePage = pageSchema(timelineItem, 'IncidentTimelinePage');
export const timelineQuery = z.object({ ...pageQuery, kind: csv(['created', 'alert_attached', 'status_changed', 'comment', 'agent_action', 'runbook_execution', 'escalation', 'ticket']) });
export const timelinePost = z.object({
  kind: z.enum(['comment', 'agent_action']).default('comment'),
  actor: z.string().min(1).max(200).optional().openapi({ description: 'who writes it; required with an API key, a browser session records the signed-in person' }),
  message: z.string().min(1).max(20_000),
  data: z.record(z.string(), z.unknown()).optional(),
});
export const escalateBody = z.object({ by: z.string().min(1).max(200).default('api'), reason: z.string().min(1).max(2000).default('escalated by API') });
export const attachBody = z.object({ alert_ids: z.array(uuid()).min(1).max(1000), by: z.string().min(1).max(200).default('api') });

export const ruleInput = z.object({
  name: z.string().min(1).max(200),
  matchers: z.array(matcherSchema).max(50).default([]),
  severities: z.array(z.string().min(1)).max(20).default([]).openapi({ description: 'alert severities the rule takes (empty: any)' }),
  group_by: z.array(z.string().min(1)).max(20).default(['alertname']).openapi({ description: 'labels forming the grouping key; alerts of one key join the open incident' }),
  incident_severity: z.string().min(1).max(50).nullable().optional().openapi({ description: "severity of incidents opened by the rule (default: the alert's)" }),
  position: z.number().int().min(0).max(1_000_000).default(100).openapi({ description: 'lower runs first; the first matching rule wins' }),
  enabled: z.boolean().default(true),
});
export const rulePatch = ruleInput.partial().refine((p) => Object.keys(p).length > 0, 'nothing to change');
export const incidentRule = ruleInput
  .extend({ id: z.string(), matchers: z.array(matcherSchema), incident_severity: z.string().nullable(), created_at: ts, updated_at: ts })
  .openapi('IncidentRule');
export const rulePage = pageSchema(incidentRule, 'IncidentRulePage');
export const ruleQuery = z.object({ ...pageQuery, enabled: bool });

// --- runbooks
export const runbookInput = z.object({
  name: z.string().min(1).max(200),
  description: z.string().max(20_000).default(''),
  matchers: z.array(matcherSchema).max(50).default([]),
  severities: z.array(z.string().min(1)).max(20).default([]),
  auto_trigger: z.boolean().default(true).openapi({ description: 'start automatically when a matching alert fires (once per alert instance, never while flapping)' }),
  enabled: z.boolean().default(true),
  webhook_url: z.url().openapi({ description: "URL of the n8n workflow's Webhook trigger (POST)" }),
  workflow_id: z.string().min(1).max(100).nullable().optional().openapi({ description: 'n8n workflow id (informational; sent to the workflow)' }),
  parameters: z.record(z.string(), z.unknown()).default({}),
  timeout_seconds: z.number().int().min(1).max(86_400).default(900),
});
export const runbookPatch = runbookInput.partial().refine((p) => Object.keys(p).length > 0, 'nothing to change');
export const runbook = runbookInput
  .extend({ id: z.string(), workflow_id: z.string().nullable(), matchers: z.array(matcherSchema), created_at: ts, updated_at: ts })
  .openapi('Runbook');
export const runbookPage = pageSchema(runbook, 'RunbookPage');
export const runbookQuery = z.object({ ...pageQuery, enabled: bool, auto_trigger: bool, search: z.string().max(200).optional() });
export const executionStatus = z.enum(['queued', 'running', 'success', 'failed', 'timed_out']);
export const execution = z
  .object({
    id: z.string(),
    runbook_id: z.string(),
    runbook_name: z.string(),
    alert_id: z.string().nullable(),
    incident_id: z.string().nullable(),
    trigger: z.enum(['manual', 'alert']),
    triggered_by: z.string(),
    status: executionStatus,
    input: z.record(z.string(), z.unknown()),
    external_execution_id: z.string().nullable(),
    result: z.unknown(),
    error: z.string().nullable(),
    started_at: ts.nullable(),
    finished_at: ts.nullable(),
    created_at: ts,
    updated_at: ts,
  })
  .openapi('RunbookExecution');
export const executionDetail = execution
  .extend({ history: z.array(z.object({ from: z.string().nullable(), to: z.string(), detail: z.string().nullable(), at: ts })) })
  .openapi('RunbookExecutionDetail');
export const executionPage = pageSchema(execution, 'RunbookExecutionPage');
export const executionQuery = z.object({
  ...pageQuery,
  status: csv(['queued', 'running', 'success', 'failed', 'timed_out']),
  trigger: z.enum(['manual', 'alert']).optional(),
  runbook_id: uuid().optional(),
  alert_id: uuid().optional(),
  incident_id: uuid().optional(),
});
export const executeBody = z.object({
  alert_id: uuid().optional(),
  incident_id: uuid().optional(),
  input: z.record(z.string(), z.unknown()).default({}).openapi({ description: "merged over the runbook's parameters" }),
  by: z.string().min(1).max(200).default('api'),
});
