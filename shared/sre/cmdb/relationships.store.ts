/** Query module of sre_relationships: derivation from entity attributes (one statement) and reads. */
import { db, isUniqueViolation } from '../../db/index.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import type { RelationshipType } from './cmdb.schemas.js';

const TABLE = 'sre_relationships';

export interface Relationship {
  id: string;
  from_entity_id: string;
  to_entity_id: string;
  type: RelationshipType;
  origin: 'discovery' | 'manual';
}

/**
 * The relationships the entities imply, across sources:
 * container part_of compose_project; router routes_to proxy_service; hostname routes_to router;
 * proxy_service routes_to container (server address = container address); scrape_target scraped_by
 * scrape_job; scrape_target runs_on container (target address = container address).
 */
const desired = `
  container_addresses as (
    select c.id, a.addr from sre_entities c cross join lateral jsonb_array_elements_text(coalesce(c.attributes->'addresses', '[]')) a(addr)
     where c.type = 'container'
  ), desired(from_id, to_id, type) as (
    -- An attribute naming another entity of the same source by its natural key.
    select f.id, t.id, ref.rel from (values
        ('container', 'compose_project', 'compose_project', 'part_of'),
        ('router', 'service', 'proxy_service', 'routes_to'),
        ('scrape_target', 'job', 'scrape_job', 'scraped_by')
      ) ref(from_type, attr, to_type, rel)
      join sre_entities f on f.type = ref.from_type
      join sre_entities t on t.source_id = f.source_id and t.type = ref.to_type and t.natural_key = f.attributes->>ref.attr
    union
    select h.id, r.id, 'routes_to' from sre_entities r
      cross join lateral jsonb_array_elements_text(coalesce(r.attributes->'hostnames', '[]')) hn(host)
      join sre_entities h on h.source_id = r.source_id and h.type = 'hostname' and h.natural_key = hn.host
     where r.type = 'router'
    union
    select s.id, ca.id, 'routes_to' from sre_entities s
      cross join lateral jsonb_array_elements_text(coalesce(s.attributes->'server_addresses', '[]')) sa(addr)
      join container_addresses ca on ca.addr = sa.addr
     where s.type = 'proxy_service'
    union
    select t.id, ca.id, 'runs_on' from sre_entities t
      cross join lateral (values (t.attributes->>'endpoint'), (t.attributes->>'host')) ta(addr)
      join container_addresses ca on ca.addr = ta.addr
     where t.type = 'scrape_target'
  )`;

/**
 * Brings derived relationships in line with the entities: inserts missing, deletes obsolete; returns
 * rows written. The desired set goes into an analysed temporary table first, so both comparisons
 * are planned as hash joins on real row counts rather than guesses about a CTE.
 */
export async function deriveRelationships(): Promise<{ inserted: number; deleted: number }> {
  return db().transaction(async (trx) => {
    await trx.raw(`create temporary table sre_desired_relationships on commit drop as with ${desired} select from_id, to_id, type from desired`);
    await trx.raw('analyze sre_desired_relationships');
    const inserted = await trx.raw(
      `insert into ${TABLE} (from_entity_id, to_entity_id, type) select from_id, to_id, type from sre_desired_relationships
       on conflict (from_entity_id, to_entity_id, type) do nothing`,
    );
    const deleted = await trx.raw(
      `delete from ${TABLE} r where r.origin = 'discovery'
          and not exists (select 1 from sre_desired_relationships d where d.from_id = r.from_entity_id and d.to_id = r.to_entity_id and d.type = r.type)`,
    );
    return { inserted: inserted.rowCount ?? 0, deleted: deleted.rowCount ?? 0 };
  });
}

/** Relationships touching an entity, each with the entity at the other end summarised. */
export async function relationshipsOf(entityId: string) {
  const { rows } = await db().raw(
    `select r.id, r.type, r.origin, 'outgoing' as direction, o.id as entity_id, o.type as entity_type, o.name as entity_name, o.health as entity_health, o.stale as entity_stale
       from ${TABLE} r join sre_entities o on o.id = r.to_entity_id where r.from_entity_id = ?
     union all
     select r.id, r.type, r.origin, 'incoming', o.id, o.type, o.name, o.health, o.stale
       from ${TABLE} r join sre_entities o on o.id = r.from_entity_id where r.to_entity_id = ?
     order by direction desc, type, entity_name`,
    [entityId, entityId],
  );
  return rows as Array<{ id: string; type: RelationshipType; origin: string; direction: 'outgoing' | 'incoming'; entity_id: string; entity_type: string; entity_name: string; entity_health: string; entity_stale: boolean }>;
}

/**
 * The entities within `depth` relationship hops of an entity, following relationships both ways
 * (recursive CTE with UNION, so each (entity, distance) pair is visited once; each entity reported at its shortest distance), and the relationships among them.
 */
export async function neighbourhood(entityId: string, depth: number): Promise<{ nodes: Array<{ id: string; depth: number }>; edges: Relationship[] }> {
  const { rows: nodes } = await db().raw(
    `with recursive walk(id, depth) as (
       select ?::uuid, 0
       union
       select case when r.from_entity_id = w.id then r.to_entity_id else r.from_entity_id end, w.depth + 1
         from walk w join ${TABLE} r on w.id in (r.from_entity_id, r.to_entity_id)
        where w.depth < ?
     )
     select id, min(depth)::int as depth from walk group by id order by depth, id`,
    [entityId, depth],
  );
  const ids = nodes.map((n: { id: string }) => n.id);
  const edges = await db()<Relationship>(TABLE)
    .select('id', 'from_entity_id', 'to_entity_id', 'type', 'origin')
    .whereIn('from_entity_id', ids)
    .whereIn('to_entity_id', ids)
    .orderBy(['type', 'id']);
  return { nodes, edges };
}

const relationshipColumns = ['id', 'from_entity_id', 'to_entity_id', 'type', 'origin', 'created_at', 'updated_at'];

export async function getRelationship(id: string) {
  const row = await db()(TABLE).where({ id }).first(relationshipColumns);
  if (!row) throw new NotFoundError(`Relationship ${id} does not exist.`);
  return row as Relationship & { created_at: Date; updated_at: Date };
}

const duplicate = () => new ConflictError('This relationship exists already.', [{ path: 'body.type', message: 'the two entities already have a relationship of this type' }]);

/** Records a relationship by hand (origin manual: discovery never removes it); either end may be a discovered entity. */
export async function insertManualRelationship(input: { from_entity_id: string; to_entity_id: string; type: RelationshipType }) {
  if (input.from_entity_id === input.to_entity_id) throw new ValidationError('A relationship links two different entities.', [{ path: 'body.to_entity_id', message: 'must differ from from_entity_id' }]);
  const found = await db()('sre_entities').whereIn('id', [input.from_entity_id, input.to_entity_id]).pluck('id');
  const missing = (['from_entity_id', 'to_entity_id'] as const).filter((f) => !found.includes(input[f]));
  if (missing.length) throw new ValidationError('Unknown entity.', missing.map((f) => ({ path: `body.${f}`, message: 'is not an entity' })));
  try {
    const [row] = await db()(TABLE).insert({ ...input, origin: 'manual' }).returning('id');
    return getRelationship(row.id);
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicate();
    throw err;
  }
}

async function assertManualRelationship(id: string) {
  const rel = await getRelationship(id);
  if (rel.origin !== 'manual') throw new ConflictError(`Relationship ${id} was derived by discovery; only manual relationships can be changed or deleted (discovery would derive it again).`, [], { origin: rel.origin });
  return rel;
}

/** Changes the type of a manual relationship. */
export async function updateManualRelationship(id: string, type: RelationshipType) {
  await assertManualRelationship(id);
  try {
    await db()(TABLE).where({ id }).update({ type });
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicate();
    throw err;
  }
  return getRelationship(id);
}

export async function deleteManualRelationship(id: string): Promise<void> {
  await assertManualRelationship(id);
  await db()(TABLE).where({ id }).delete();
}
