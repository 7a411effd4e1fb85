/** The CMDB routes: entity types, entities and their neighbourhood. */
import { ApiRouter } from '../../routing.js';
import { z } from '../../../shared/zod.js';
import { listEntities } from '../../../shared/sre/cmdb/entities.store.js';
import { entityDetail, entityNeighbourhood } from '../../../shared/sre/cmdb/views.js';
import { entityTypes } from '../../../shared/sre/cmdb/model.js';
import * as s from './cmdb.schemas.js';
import { idParams } from './common.schemas.js';

const tags = ['cmdb'];
const base = '/api/v1/cmdb';

export function cmdbRoutes(): ApiRouter {
  return new ApiRouter()
    .route({
      method: 'get',
      path: `${base}/entity-types`,
      tags,
      summary: 'Entity types the CMDB knows',
      auth: 'apiKey',
      responses: { 200: { description: 'Entity type names', schema: z.object({ items: z.array(z.string()) }) } },
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
      auth: 'apiKey',
      request: { query: s.entityQuery },
      responses: { 200: { description: 'A page of entities', schema: s.entityList } },
      handler: async ({ query }) => ({ ...(await listEntities(query)), limit: query.limit, offset: query.offset }),
    })
    .route({
      method: 'get',
      path: `${base}/entities/{id}`,
      tags,
      summary: 'An entity with its relationships (both directions), monitors and recommendations',
      auth: 'apiKey',
      request: { params: idParams },
      responses: { 200: { description: 'The entity', schema: s.entityDetail } },
      handler: ({ params }) => entityDetail(params.id),
    })
    .route({
      method: 'get',
      path: `${base}/entities/{id}/neighbourhood`,
      tags,
      summary: "An entity's neighbourhood to depth n",
      description: 'Follows relationships in both directions up to `depth` hops (1–5, default 1); each entity carries its shortest `distance`.',
      auth: 'apiKey',
      request: { params: idParams, query: s.neighbourhoodQuery },
      responses: { 200: { description: 'Entities and the relationships among them', schema: s.neighbourhoodSchema } },
      handler: ({ params, query }) => entityNeighbourhood(params.id, query.depth),
    });
}
