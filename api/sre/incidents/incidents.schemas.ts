/** Request and response schemas of the incident routes (incidents, timeline, rules). */
import { z, uuid } from '../../../shared/zod.js';
import { labelQuery, offsetPageQuery, offsetPageSchema } from '../../../shared/sre/listing.js';
import { matcherSchema } from '../../../shared/sre/automation/matchers.js';
import { TimelineKind, timelineKinds } from '../../../shared/sre/incidents/incident.store.js';
import { labels, ts, csv, csvText, bool, actorBody } from '../common.schemas.js';

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
    assignee: z.string().nullable(),
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
export const incidentPage = offsetPageSchema(incident, 'IncidentPage');
export const incidentQuery = z.object({
  ...offsetPageQuery,
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
export const timelineKind = z.enum(timelineKinds);
export const incidentPatch = z
  .object({
    title: z.string().trim().min(1).max(500).optional(),
    severity: z.string().trim().min(1).max(50).optional(),
    assignee: z.string().trim().min(1).max(200).nullable().optional().openapi({ description: 'who handles it (free text, e.g. an email); null unassigns' }),
    by: actorBody.shape.by,
  })
  .refine((p) => p.title !== undefined || p.severity !== undefined || p.assignee !== undefined, 'nothing to change: give title, severity or assignee');
export const timelineItem = z
  .object({ id: z.string(), incident_id: z.string(), kind: timelineKind, actor: z.string(), message: z.string(), data: z.record(z.string(), z.unknown()), at: ts })
  .openapi('IncidentTimelineItem');
export const timelinePage = offsetPageSchema(timelineItem, 'IncidentTimelinePage');
export const timelineQuery = z.object({ ...offsetPageQuery, kind: csv(timelineKinds) });
export const timelinePost = z.object({
  kind: z.enum([TimelineKind.Comment, TimelineKind.AgentAction]).default(TimelineKind.Comment),
  actor: z.string().min(1).max(200).optional().openapi({ description: 'who writes it; required with an API key, a browser session records the signed-in person' }),
  message: z.string().min(1).max(20_000),
  data: z.record(z.string(), z.unknown()).optional(),
});
export const timelineRecorded = z.object({ recorded: z.literal(true) });
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
export const rulePage = offsetPageSchema(incidentRule, 'IncidentRulePage');
export const ruleQuery = z.object({ ...offsetPageQuery, enabled: bool });
