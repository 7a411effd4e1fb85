/** Request and response schemas of the monitor routes (recommendations, monitors, deployment). */
import { z, uuid } from '../../../shared/zod.js';
import { alertingRuleSchema } from '../../../shared/sre/monitors/rules.js';
import { entityTypeSchema } from '../../../shared/sre/cmdb/cmdb.schemas.js';
import { timestamp, page } from '../cmdb/common.schemas.js';

export const recommendationSchema = z
  .object({
    id: z.string(),
    entity_id: z.string(),
    origin: z.enum(['template', 'llm']),
    template: z.string(),
    alert: z.string(),
    rule: alertingRuleSchema,
    rationale: z.string(),
    status: z.enum(['proposed', 'applied', 'dismissed']),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('MonitoringRecommendation');

export const monitorSchema = z
  .object({
    id: z.string(),
    entity_id: z.string(),
    recommendation_id: z.string().nullable(),
    alert: z.string(),
    rule: alertingRuleSchema,
    status: z.enum(['pending', 'deployed', 'disabled']).openapi({ description: 'pending: to deploy; deployed: in the rule file; disabled: kept, left out of the rule file from the next deploy on' }),
    last_error: z.string().nullable(),
    deployed_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('EntityMonitor');

export const recommendationList = z.object({ items: z.array(recommendationSchema) });
export const monitorList = z.object({ items: z.array(monitorSchema) });
export const recommendationQuery = z.object({ entity_id: uuid().optional(), status: recommendationSchema.shape.status.optional(), ...page });
export const monitorQuery = z.object({ entity_id: uuid().optional(), status: monitorSchema.shape.status.optional(), ...page });

export const proposalResponse = z
  .object({
    stored: z.array(recommendationSchema),
    rejected: z.array(z.object({ alert: z.string().nullable(), error: z.string() })),
  })
  .openapi('MonitorProposals');

export const deployResponse = z
  .object({
    deployed: z.number().int().openapi({ description: 'monitors deployed by this call (0 when none was pending)' }),
    total: z.number().int().openapi({ description: 'monitors in the rule file' }),
    removed: z.number().int().openapi({ description: 'rules of the previous rule file no longer in it (monitors removed, disabled or taken out as stale)' }),
    removed_stale: z.number().int().openapi({ description: 'monitors of stale entities deleted by this deploy' }),
    rule_file: z.string(),
    checker: z.enum(['promtool', 'schema']).nullable(),
  })
  .openapi('MonitorDeployment');

export const monitorPatch = z.object({ enabled: z.boolean() });
export const templateInfo = z
  .object({
    entity_type: entityTypeSchema,
    template: z.string(),
    alert: z.string(),
    exporter: z.string().openapi({ description: 'the exporter whose metrics the rule uses' }),
    metrics: z.array(z.string()),
    condition: z.string().optional().openapi({ description: 'when the template applies, if not always' }),
  })
  .openapi('MonitorTemplate');
export const templateList = z.object({ items: z.array(templateInfo) });
