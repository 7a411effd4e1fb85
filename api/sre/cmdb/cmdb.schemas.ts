/** Request and response schemas of the CMDB routes (entities, relationships). */
import { z } from '../../../shared/zod.js';
import { entityTypeSchema, healthSchema, relationshipTypeSchema } from '../../../shared/sre/cmdb/model.js';
import { timestamp, booleanQuery, page } from './common.schemas.js';
import { recommendationSchema, monitorSchema } from '../monitors/monitors.schemas.js';

export const entitySchema = z
  .object({
    id: z.string(),
    type: entityTypeSchema,
    source_id: z.string(),
    source: z.string(),
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
  source: z.string().min(1).optional().openapi({ description: 'discovery source name' }),
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
