/** Request and response schemas of the CMDB API (entities, discovery, recommendations, monitors). */
import { z, uuid } from '../../shared/zod.js';
import { entityTypeSchema, healthSchema, relationshipTypeSchema, sourceKindSchema } from '../../shared/sre/cmdb/model.js';
import { alertingRuleSchema } from '../../shared/sre/monitors/rules.js';

const timestamp = z.date().openapi({ type: 'string', format: 'date-time' });
const booleanQuery = z.enum(['true', 'false']).transform((v) => v === 'true');
export const page = {
  limit: z.coerce.number().int().min(1).max(500).default(50),
  offset: z.coerce.number().int().min(0).default(0),
};

export const idParams = z.object({ id: uuid() });

export const entitySchema = z
  .object({
    id: z.string(),
    type: entityTypeSchema,
    source_id: z.string().nullable().openapi({ description: 'null for a manual entity' }),
    source: z.string().openapi({ description: 'discovery source name, or `manual`' }),
    origin: z.enum(['discovery', 'manual']),
    natural_key: z.string(),
    name: z.string(),
    attributes: z.record(z.string(), z.unknown()),
    health: healthSchema,
    first_seen_at: timestamp,
    last_seen_at: timestamp,
    stale: z.boolean(),
    stale_since: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('CmdbEntity');

export const entityQuery = z.object({
  type: entityTypeSchema.optional(),
  source: z.string().min(1).optional().openapi({ description: 'discovery source name, or `manual`' }),
  health: healthSchema.optional(),
  stale: booleanQuery.optional(),
  q: z.string().min(1).max(200).optional().openapi({ description: 'text matched (case-insensitive) in name, natural key and attributes' }),
  ...page,
});

export const entityList = z.object({ items: z.array(entitySchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }).openapi('CmdbEntityList');

export const relationshipView = z.object({
  id: z.string(),
  type: relationshipTypeSchema,
  origin: z.string(),
  direction: z.enum(['outgoing', 'incoming']),
  entity_id: z.string(),
  entity_type: z.string(),
  entity_name: z.string(),
  entity_health: z.string(),
  entity_stale: z.boolean(),
});

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

export const entityDetail = entitySchema
  .extend({ relationships: z.array(relationshipView), monitors: z.array(monitorSchema), recommendations: z.array(recommendationSchema) })
  .openapi('CmdbEntityDetail');

export const neighbourhoodQuery = z.object({ depth: z.coerce.number().int().min(1).max(5).default(1) });
export const neighbourhoodSchema = z
  .object({
    entity_id: z.string(),
    depth: z.number().int(),
    entities: z.array(entitySchema.extend({ distance: z.number().int() })),
    relationships: z.array(z.object({ id: z.string(), from_entity_id: z.string(), to_entity_id: z.string(), type: relationshipTypeSchema, origin: z.string() })),
  })
  .openapi('CmdbNeighbourhood');

export const runSchema = z
  .object({
    id: z.string(),
    trigger: z.enum(['schedule', 'manual']),
    slot: timestamp.nullable(),
    status: z.enum(['running', 'succeeded', 'partial', 'failed']),
    started_at: timestamp,
    finished_at: timestamp.nullable(),
    added: z.number().int(),
    updated: z.number().int(),
    unchanged: z.number().int(),
    stale: z.number().int(),
    rows_written: z.number().int(),
    errors: z.record(z.string(), z.string()),
  })
  .openapi('DiscoveryRun');

export const triggerResponse = z
  .object({ run_id: z.string(), status: runSchema.shape.status, started_at: timestamp, already_running: z.boolean() })
  .openapi('DiscoveryTriggered');

export const sourceSchema = z
  .object({ id: z.string(), name: z.string(), kind: sourceKindSchema, address: z.string(), enabled: z.boolean(), created_at: timestamp, updated_at: timestamp })
  .openapi('DiscoverySource');

export const sourceCreate = z.object({
  name: z.string().min(1).max(100).regex(/^[a-z0-9][a-z0-9_.-]*$/, 'lower-case letters, digits, . _ -'),
  kind: sourceKindSchema,
  address: z.string().min(1).max(2000).openapi({ description: 'docker: tcp://host:port or a unix socket path; prometheus and traefik: base URL' }),
  enabled: z.boolean().optional(),
});
export const sourcePatch = z
  .object({ address: sourceCreate.shape.address.optional(), enabled: z.boolean().optional() })
  .refine((p) => p.address !== undefined || p.enabled !== undefined, 'give address or enabled');

const outcomeSchema = z.object({
  run_id: z.string(),
  status: z.enum(['succeeded', 'failed']),
  started_at: timestamp,
  finished_at: timestamp,
  seen: z.number().int(),
  added: z.number().int(),
  updated: z.number().int(),
  unchanged: z.number().int(),
  stale: z.number().int(),
  error: z.string().nullable(),
});

export const statusQuery = z.object({
  per_source: z.coerce.number().int().min(1).max(50).default(5),
  runs: z.coerce.number().int().min(1).max(100).default(10),
});
export const statusSchema = z
  .object({
    running: runSchema.nullable(),
    sources: z.array(sourceSchema.extend({ last_runs: z.array(outcomeSchema) })),
    runs: z.array(runSchema),
  })
  .openapi('DiscoveryStatus');

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

const attributes = z.record(z.string(), z.unknown()).refine((a) => JSON.stringify(a).length <= 65_536, 'must be at most 64 KiB as JSON');
export const manualEntityCreate = z.object({
  type: entityTypeSchema,
  name: z.string().trim().min(1).max(500),
  natural_key: z.string().trim().min(1).max(500).optional().openapi({ description: 'unique per type among manual entities; default: the name' }),
  attributes: attributes.optional(),
  health: healthSchema.default('unknown'),
});
export const manualEntityPatch = z
  .object({ name: z.string().trim().min(1).max(500).optional(), attributes: attributes.optional().openapi({ description: 'replaces the attributes' }), health: healthSchema.optional() })
  .refine((p) => Object.keys(p).length > 0, 'nothing to change: give name, attributes or health');
export const relationshipSchema = z
  .object({ id: z.string(), from_entity_id: z.string(), to_entity_id: z.string(), type: relationshipTypeSchema, origin: z.enum(['discovery', 'manual']), created_at: timestamp, updated_at: timestamp })
  .openapi('CmdbRelationship');
export const relationshipCreate = z.object({ from_entity_id: uuid(), to_entity_id: uuid(), type: relationshipTypeSchema });
export const relationshipPatch = z.object({ type: relationshipTypeSchema });

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
