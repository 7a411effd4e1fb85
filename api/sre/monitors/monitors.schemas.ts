/** Request and response schemas of the monitor routes (recommendations, monitors, deployment). */
import { z, uuid } from '../../../shared/zod.js';
import { alertingRuleSchema } from '../../../shared/sre/monitors/rules.js';
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
    status: z.enum(['pending', 'deployed']),
    last_error: z.string().nullable(),
    deployed_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('EntityMonitor');

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
    rule_file: z.string(),
    checker: z.enum(['promtool', 'schema']).nullable(),
  })
  .openapi('MonitorDeployment');
