/** Request and response schemas of the runbook routes (runbooks, executions). */
import { z, uuid } from '../../../shared/zod.js';
import { offsetPageQuery, offsetPageSchema } from '../../../shared/sre/listing.js';
import { matcherSchema } from '../../../shared/sre/automation/matchers.js';
import { ts, csv, bool } from '../common.schemas.js';

// --- runbooks
export const runbookInput = z.object({
  name: z.string().min(1).max(200),
  description: z.string().max(20_000).default(''),
  matchers: z.array(matcherSchema).max(50).default([]),
  severities: z.array(z.string().min(1)).max(20).default([]),
  auto_trigger: z.boolean().default(true).openapi({ description: 'start automatically when a matching alert fires (once per alert instance, never while flapping)' }),
  enabled: z.boolean().default(true),
  webhook_url: z
    .string()
    .min(1)
    .max(2000)
    .openapi({ description: "the n8n workflow's Webhook trigger (POST): a path under AUTOMATION_URL (`/webhook/restart-service`) or an absolute URL under it" }),
  workflow_id: z.string().min(1).max(100).nullable().optional().openapi({ description: 'n8n workflow id (informational; sent to the workflow)' }),
  parameters: z.record(z.string(), z.unknown()).default({}),
  timeout_seconds: z.number().int().min(1).max(86_400).default(900),
});
export const runbookPatch = runbookInput.partial().refine((p) => Object.keys(p).length > 0, 'nothing to change');
export const runbook = runbookInput
  .extend({ id: z.string(), workflow_id: z.string().nullable(), matchers: z.array(matcherSchema), created_at: ts, updated_at: ts })
  .openapi('Runbook');
export const runbookPage = offsetPageSchema(runbook, 'RunbookPage');
export const runbookQuery = z.object({ ...offsetPageQuery, enabled: bool, auto_trigger: bool, search: z.string().max(200).optional() });
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
export const executionPage = offsetPageSchema(execution, 'RunbookExecutionPage');
export const executionQuery = z.object({
  ...offsetPageQuery,
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
