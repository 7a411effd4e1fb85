/** Request and response schemas of the CMDB routes (entities, relationships). */
import { z, uuid } from '../../../shared/zod.js';
import { entityTypeSchema, healthSchema, relationshipTypeSchema } from '../../../shared/sre/cmdb/cmdb.schemas.js';
import { timestamp, booleanQuery, page } from './common.schemas.js';
import { recommendationSchema, monitorSchema } from '../monitors/monitors.schemas.js';

/** GET …/entity-types: the names the CMDB knows. */
export const entityTypeList = z.object({ items: z.array(z.string()) });
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
