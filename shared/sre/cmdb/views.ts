/** Composite reads of the CMDB: an entity with everything attached, and its neighbourhood. */
import { getEntities, getEntity } from './entities.store.js';
import { neighbourhood, relationshipsOf } from './relationships.store.js';
import { listMonitors, listRecommendations } from '../monitors/recommendations.store.js';

/** An entity with its relationships both ways, its monitors and its recommendations. */
export async function entityDetail(id: string) {
  const entity = await getEntity(id);
  const [relationships, monitors, recommendations] = await Promise.all([
    relationshipsOf(id),
    listMonitors({ entity_id: id, limit: 500, offset: 0 }),
    listRecommendations({ entity_id: id, limit: 500, offset: 0 }),
  ]);
  return { ...entity, relationships, monitors, recommendations };
}

/** The entities within `depth` hops (both directions), each with its distance, and the relationships among them. */
export async function entityNeighbourhood(id: string, depth: number) {
  await getEntity(id);
  const { nodes, edges } = await neighbourhood(id, depth);
  const distance = new Map(nodes.map((n) => [n.id, n.depth]));
  const entities = (await getEntities([...distance.keys()]))
    .map((e) => ({ ...e, distance: distance.get(e.id)! }))
    .sort((a, b) => a.distance - b.distance || a.type.localeCompare(b.type) || a.name.localeCompare(b.name));
  return { entity_id: id, depth, entities, relationships: edges };
}
