/**
 * Query module of sre_entities. Discovery upserts a source's entities in one statement that writes
 * only rows whose content changed (IS DISTINCT FROM) and marks unseen ones stale in the same statement.
 *
 * "Seen" without writes: a live (not stale) entity was, by construction, seen by every successful run
 * of its source since it was last written, so its last_seen_at is read as the start of its source's
 * latest successful run (sre_discovery_run_sources); the stored column is only exact for stale rows.
 */
import { containsPattern, db, isUniqueViolation } from '../../db/index.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import type { DiscoveredEntity, EntityType, Health } from './cmdb.schemas.js';

const TABLE = 'sre_entities';

export interface Entity {
  id: string;
  type: EntityType;
  /** Null for a manual entity (source `manual`). */
  source_id: string | null;
  source: string;
  origin: 'discovery' | 'manual';
  natural_key: string;
  name: string;
  attributes: Record<string, unknown>;
  health: Health;
  first_seen_at: Date;
  last_seen_at: Date;
  stale: boolean;
  stale_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface UpsertOutcome {
  added: number;
  updated: number;
  unchanged: number;
  stale: number;
  /** Entities inserted by this upsert (they get recommendations). */
  inserted: Array<Pick<Entity, 'id' | 'type' | 'name' | 'natural_key' | 'attributes'>>;
}

/** Upserts what one source reported and marks the source's entities it no longer reports stale. */
export async function upsertSourceEntities(sourceId: string, seenAt: Date, entities: DiscoveredEntity[]): Promise<UpsertOutcome> {
  const unique = new Map(entities.map((e) => [`${e.type}\u0000${e.natural_key}`, e]));
  const { rows } = await db().raw(
    `with input as (
       select * from jsonb_to_recordset(?::jsonb) as x(type text, natural_key text, name text, attributes jsonb, health text)
     ), upserted as (
       insert into ${TABLE} as e (type, source_id, natural_key, name, attributes, health, first_seen_at, last_seen_at)
       select type, ?::uuid, natural_key, name, attributes, health, ?, ? from input
       on conflict (source_id, type, natural_key) do update
          set name = excluded.name, attributes = excluded.attributes, health = excluded.health,
              stale = false, stale_since = null, last_seen_at = excluded.last_seen_at
        where (e.name, e.attributes, e.health, e.stale) is distinct from (excluded.name, excluded.attributes, excluded.health, false)
       returning e.id, e.type, e.name, e.natural_key, e.attributes, (xmax = 0) as inserted
     ), staled as (
       update ${TABLE} e
          set stale = true, stale_since = ?,
              last_seen_at = coalesce((select max(rs.started_at) from sre_discovery_run_sources rs
                                        where rs.source_id = e.source_id and rs.status = 'succeeded'), e.last_seen_at)
        where e.source_id = ?::uuid and not e.stale
          and not exists (select 1 from input i where i.type = e.type and i.natural_key = e.natural_key)
       returning e.id
     )
     select 'upserted' as kind, id, type, name, natural_key, attributes, inserted from upserted
     union all
     select 'staled', id, null, null, null, null, null from staled`,
    [JSON.stringify([...unique.values()]), sourceId, seenAt, seenAt, seenAt, sourceId],
  );
  const upserted = rows.filter((r: { kind: string }) => r.kind === 'upserted');
  const inserted = upserted.filter((r: { inserted: boolean }) => r.inserted).map(({ id, type, name, natural_key, attributes }: Entity) => ({ id, type, name, natural_key, attributes }));
  return {
    added: inserted.length,
    updated: upserted.length - inserted.length,
    unchanged: unique.size - upserted.length,
    stale: rows.length - upserted.length,
    inserted,
  };
}

/** Entity rows with their source name and their effective last_seen_at (see the module comment). */
function entityQuery() {
  const k = db();
  return k
    .from(`${TABLE} as e`)
    .leftJoin('sre_discovery_sources as s', 's.id', 'e.source_id')
    .select(
      'e.id', 'e.type', 'e.source_id', k.raw(`coalesce(s.name, 'manual') as source`), 'e.origin', 'e.natural_key', 'e.name', 'e.attributes', 'e.health',
      'e.first_seen_at', 'e.stale', 'e.stale_since', 'e.created_at', 'e.updated_at',
      k.raw(`case when e.stale then e.last_seen_at
                  else greatest(e.last_seen_at, (select max(rs.started_at) from sre_discovery_run_sources rs
                                                  where rs.source_id = e.source_id and rs.status = 'succeeded')) end as last_seen_at`),
    );
}

export interface EntityFilter {
  type?: EntityType;
  source?: string;
  health?: Health;
  stale?: boolean;
  q?: string;
  limit: number;
  offset: number;
}

/** A page of entities matching the filter, and how many match in all. */
export async function listEntities(f: EntityFilter): Promise<{ items: Entity[]; total: number }> {
  const filtered = (q: ReturnType<typeof entityQuery>) => {
    if (f.type) q.where('e.type', f.type);
    if (f.source === 'manual') q.where('e.origin', 'manual');
    else if (f.source) q.where('s.name', f.source);
    if (f.health) q.where('e.health', f.health);
    if (f.stale !== undefined) q.where('e.stale', f.stale);
    if (f.q) {
      const like = containsPattern(f.q);
      q.where((w) => w.whereILike('e.name', like).orWhereILike('e.natural_key', like).orWhereRaw('e.attributes::text ilike ?', [like]));
    }
    return q;
  };
  const [items, counted] = await Promise.all([
    filtered(entityQuery()).orderBy([{ column: 'e.type' }, { column: 'e.name' }, { column: 'e.id' }]).limit(f.limit).offset(f.offset),
    filtered(entityQuery()).clearSelect().count<{ total: number }[]>({ total: '*' }),
  ]);
  return { items, total: Number(counted[0]?.total ?? 0) };
}

export async function getEntity(id: string): Promise<Entity> {
  const entity = await entityQuery().where('e.id', id).first();
  if (!entity) throw new NotFoundError(`Entity ${id} does not exist.`);
  return entity;
}

export async function getEntities(ids: string[]): Promise<Entity[]> {
  return ids.length ? entityQuery().whereIn('e.id', ids).orderBy([{ column: 'e.type' }, { column: 'e.name' }]) : [];
}

export interface ManualEntityInput {
  type: EntityType;
  name: string;
  natural_key?: string;
  attributes?: Record<string, unknown>;
  health?: Health;
}

/** Inserts a manual entity (natural key defaults to the name); 409 when its type and key exist. */
export async function insertManualEntity(input: ManualEntityInput): Promise<Entity> {
  try {
    const [row] = await db()(TABLE)
      .insert({ type: input.type, origin: 'manual', source_id: null, natural_key: input.natural_key ?? input.name, name: input.name, attributes: JSON.stringify(input.attributes ?? {}), health: input.health ?? 'unknown' })
      .returning('id');
    return getEntity(row.id);
  } catch (err) {
    if (isUniqueViolation(err, 'sre_entities_manual_key')) throw new ConflictError(`A manual ${input.type} with key "${input.natural_key ?? input.name}" exists.`, [{ path: 'body.natural_key', message: 'is already used by a manual entity of this type' }]);
    throw err;
  }
}

/** The 409 for an edit of a discovered entity: discovery owns it and would undo the change. */
async function assertManual(id: string): Promise<Entity> {
  const entity = await getEntity(id);
  if (entity.origin !== 'manual') {
    throw new ConflictError(`Entity ${id} was discovered by source "${entity.source}"; only manual entities can be edited or deleted (discovery would undo it).`, [], { origin: entity.origin, source: entity.source });
  }
  return entity;
}

/** Changes a manual entity's name, attributes (replaced) or health. */
export async function updateManualEntity(id: string, patch: { name?: string; attributes?: Record<string, unknown>; health?: Health }): Promise<Entity> {
  await assertManual(id);
  const set = {
    ...(patch.name !== undefined ? { name: patch.name } : {}),
    ...(patch.attributes !== undefined ? { attributes: JSON.stringify(patch.attributes) } : {}),
    ...(patch.health !== undefined ? { health: patch.health } : {}),
    last_seen_at: db().fn.now(),
  };
  await db()(TABLE).where({ id }).update(set);
  return getEntity(id);
}

/** Deletes a manual entity with its relationships, recommendations and monitors (cascades). */
export async function deleteManualEntity(id: string): Promise<void> {
  await assertManual(id);
  await db()(TABLE).where({ id }).delete();
}
