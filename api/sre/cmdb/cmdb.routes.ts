/** The CMDB routes: entity types, entities and their neighbourhood. */
import { ApiRouter } from '../../routing.js';
import { deleteManualEntity, insertManualEntity, listEntities, updateManualEntity } from '../../../shared/sre/cmdb/entities.store.js';
import { deleteManualRelationship, getRelationship, insertManualRelationship, updateManualRelationship } from '../../../shared/sre/cmdb/relationships.store.js';
import { entityDetail, entityNeighbourhood } from '../../../shared/sre/cmdb/views.js';
import { entityTypes } from '../../../shared/sre/cmdb/cmdb.schemas.js';
import * as s from './cmdb.schemas.js';
import { idParams } from './common.schemas.js';

const tags = ['cmdb'];
const base = '/api/v1/cmdb';
const manualDescription =
  'Manual entities have source `manual` (no discovery source, `source_id` null, `origin: manual`); discovery never marks them stale, ' +
  'changes or deletes them. Discovered entities are owned by their source and are read-only here (409).';


export function cmdbRoutes(): ApiRouter {
  return new ApiRouter()
    .route({
      method: 'get',
      path: `${base}/entity-types`,
      tags,
      summary: 'Entity types the CMDB knows',
      auth: 'key-or-sre',
      responses: { 200: { description: 'Entity type names', schema: s.entityTypeList } },
      handler: () => ({ items: [...entityTypes] }),
    })
    .route({
      method: 'get',
      path: `${base}/entities`,
      tags,
      summary: 'List and filter entities',
      description:
        'Filters combine with AND. `stale=true` lists entities no longer reported by their source (kept, not deleted). ' +
        '`last_seen_at` of a live entity is the start of its source\'s latest successful discovery run. Ordered by type, name.',
      auth: 'key-or-sre',
      request: { query: s.entityQuery },
      responses: { 200: { description: 'A page of entities', schema: s.entityList } },
      handler: async ({ query }) => ({ ...(await listEntities(query)), limit: query.limit, offset: query.offset }),
    })
    .route({
      method: 'get',
      path: `${base}/entities/{id}`,
      tags,
      summary: 'An entity with its relationships (both directions), monitors and recommendations',
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 200: { description: 'The entity', schema: s.entityDetail } },
      handler: ({ params }) => entityDetail(params.id),
    })
    .route({
      method: 'post',
      path: `${base}/entities`,
      tags,
      summary: 'Record an entity by hand',
      description: manualDescription,
      auth: 'key-or-sre',
      request: { body: s.manualEntityCreate },
      responses: { 201: { description: 'The entity', schema: s.entitySchema } },
      errors: { 409: 'A manual entity of this type and natural key exists' },
      handler: ({ body }) => insertManualEntity(body),
    })
    .route({
      method: 'patch',
      path: `${base}/entities/{id}`,
      tags,
      summary: 'Change a manual entity',
      description: `${manualDescription} \`attributes\` replaces the whole object.`,
      auth: 'key-or-sre',
      request: { params: idParams, body: s.manualEntityPatch },
      responses: { 200: { description: 'The entity', schema: s.entitySchema } },
      errors: { 409: 'The entity was discovered (only manual entities can be changed)' },
      handler: ({ params, body }) => updateManualEntity(params.id, body),
    })
    .route({
      method: 'delete',
      path: `${base}/entities/{id}`,
      tags,
      summary: 'Delete a manual entity',
      description: `${manualDescription} Its relationships, recommendations and monitors go with it (a deployed monitor leaves the rule file at the next deploy).`,
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 204: { description: 'Deleted' } },
      errors: { 409: 'The entity was discovered (only manual entities can be deleted)' },
      handler: async ({ params }, ctx) => {
        await deleteManualEntity(params.id);
        ctx.status = 204;
      },
    })
    .route({
      method: 'post',
      path: `${base}/relationships`,
      tags,
      summary: 'Record a relationship by hand',
      description: 'Origin `manual`: discovery derives and removes only its own (`discovery`) relationships and never touches this one. Either end may be a discovered or a manual entity.',
      auth: 'key-or-sre',
      request: { body: s.relationshipCreate },
      responses: { 201: { description: 'The relationship', schema: s.relationshipSchema } },
      errors: { 409: 'The two entities already have a relationship of this type' },
      handler: ({ body }) => insertManualRelationship(body),
    })
    .route({
      method: 'get',
      path: `${base}/relationships/{id}`,
      tags,
      summary: 'One relationship',
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 200: { description: 'The relationship', schema: s.relationshipSchema } },
      handler: ({ params }) => getRelationship(params.id),
    })
    .route({
      method: 'patch',
      path: `${base}/relationships/{id}`,
      tags,
      summary: 'Change the type of a manual relationship',
      auth: 'key-or-sre',
      request: { params: idParams, body: s.relationshipPatch },
      responses: { 200: { description: 'The relationship', schema: s.relationshipSchema } },
      errors: { 409: 'Derived by discovery (only manual relationships can be changed), or the new type exists already' },
      handler: ({ params, body }) => updateManualRelationship(params.id, body.type),
    })
    .route({
      method: 'delete',
      path: `${base}/relationships/{id}`,
      tags,
      summary: 'Delete a manual relationship',
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 204: { description: 'Deleted' } },
      errors: { 409: 'Derived by discovery (it would be derived again at the next run)' },
      handler: async ({ params }, ctx) => {
        await deleteManualRelationship(params.id);
        ctx.status = 204;
      },
    })
    .route({
      method: 'get',
      path: `${base}/entities/{id}/neighbourhood`,
      tags,
      summary: "An entity's neighbourhood to depth n",
      description: 'Follows relationships in both directions up to `depth` hops (1–5, default 1); each entity carries its shortest `distance`.',
      auth: 'key-or-sre',
      request: { params: idParams, query: s.neighbourhoodQuery },
      responses: { 200: { description: 'Entities and the relationships among them', schema: s.neighbourhoodSchema } },
      handler: ({ params, query }) => entityNeighbourhood(params.id, query.depth),
    });
}
