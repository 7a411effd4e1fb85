/** sre_alert_sources: one webhook endpoint per (kind, name), each with its own secret. */
import { LRUCache } from 'lru-cache';
import { config } from '../../config.js';
import { db, isUniqueViolation } from '../../db/index.js';
import { ConflictError, NotFoundError, UnauthorizedError } from '../../errors.js';
import { paged, type OffsetPage } from '../listing.js';
import { secretsEqual } from '../../secrets.js';

export const TABLE = 'sre_alert_sources';
export const sourceKinds = ['alertmanager', 'grafana'] as const;
export type SourceKind = (typeof sourceKinds)[number];
/** What a source name may be (the API refuses others at creation), so a webhook path outside it names no source. */
export const sourceNamePattern = /^[a-z0-9][a-z0-9_-]{0,62}$/;

interface Row {
  id: string;
  kind: SourceKind;
  name: string;
  secret: string | null;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface AlertSource {
  id: string;
  kind: SourceKind;
  name: string;
  enabled: boolean;
  /** Whether the source has its own secret (else ALERT_WEBHOOK_TOKEN applies). The secret itself is never returned. */
  has_own_secret: boolean;
  webhook_path: string;
  created_at: string;
  updated_at: string;
}

function toDomain(row: Row): AlertSource {
  return {
    id: row.id,
    kind: row.kind,
    name: row.name,
    enabled: row.enabled,
    has_own_secret: row.secret !== null,
    webhook_path: `/webhooks/${row.kind}/${row.name}`,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export async function listSources(f: { kind?: SourceKind; enabled?: boolean; since?: string; until?: string; limit: number; offset: number }): Promise<OffsetPage<AlertSource>> {
  const q = db()<Row>(TABLE).select('*');
  if (f.kind) q.where('kind', f.kind);
  if (f.enabled !== undefined) q.where('enabled', f.enabled);
  return paged<Row, AlertSource>(q, { ...f, orderBy: 'kind, name', timeColumn: 'created_at' }, toDomain);
}

export async function getSource(id: string): Promise<AlertSource> {
  const row = await db()<Row>(TABLE).where({ id }).first();
  if (!row) throw new NotFoundError(`No alert source ${id}.`);
  return toDomain(row);
}

export async function createSource(input: { kind: SourceKind; name: string; secret?: string | null; enabled?: boolean }): Promise<AlertSource> {
  try {
    const [row] = await db()<Row>(TABLE)
      .insert({ kind: input.kind, name: input.name, secret: input.secret ?? null, enabled: input.enabled ?? true })
      .returning('*');
    return toDomain(row as Row);
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`A ${input.kind} source named "${input.name}" exists.`);
    throw err;
  }
}

export async function updateSource(id: string, patch: { secret?: string | null; enabled?: boolean }): Promise<AlertSource> {
  const [row] = await db()<Row>(TABLE).where({ id }).update(patch).returning('*');
  if (!row) throw new NotFoundError(`No alert source ${id}.`);
  return toDomain(row as Row);
}

export async function deleteSource(id: string): Promise<void> {
  const row = await db()<Row>(TABLE).where({ id }).first();
  if (!row) throw new NotFoundError(`No alert source ${id}.`);
  if (row.name === 'default') throw new ConflictError('The default source of each kind always exists; disable it instead.');
  await db()<Row>(TABLE).where({ id }).delete();
}

// Webhook requests look their source up on every call; a short cache keeps that off the hot path. It is an
// LRU with a cap, as anonymous callers choose the names looked up (unknown ones are cached too, so a flood
// of them does not reach Postgres on every call, but can only push older entries out).
const cacheMs = 2000;
export const sourceCacheMax = 1000;
const cache = new LRUCache<string, { row: Row | null }>({ max: sourceCacheMax, ttl: cacheMs });

/** Forgets cached sources (after changes through the API, and in tests). */
export function forgetSources(): void {
  cache.clear();
}

/** How many lookups the cache holds (its bound is sourceCacheMax). */
export function cachedSourceCount(): number {
  return cache.size;
}

/**
 * The enabled source a webhook call addresses, after checking its secret (the bearer token or the
 * basic-auth password). A source without its own secret uses ALERT_WEBHOOK_TOKEN; when that is also
 * empty (only possible outside production) no secret is required.
 */
export interface AuthenticatedSource {
  id: string;
  /** kind/name */
  label: string;
}

export async function authenticateSource(kind: SourceKind, name: string, presented: string | undefined): Promise<AuthenticatedSource> {
  // Checked before any lookup: a name no source can have is not worth a query or a cache entry.
  if (!sourceKinds.includes(kind) || !sourceNamePattern.test(name)) throw new NotFoundError(`No enabled ${kind} alert source named "${name.slice(0, 63)}".`);
  const key = `${kind}/${name}`;
  let hit = cache.get(key);
  if (!hit) {
    hit = { row: (await db()<Row>(TABLE).where({ kind, name }).first()) ?? null };
    cache.set(key, hit);
  }
  const row = hit.row;
  if (!row || !row.enabled) throw new NotFoundError(`No enabled ${kind} alert source named "${name}".`);
  const secret = row.secret ?? config().sre.alertWebhookToken;
  if (secret && (!presented || !secretsEqual(presented, secret))) {
    throw new UnauthorizedError('The webhook secret is missing or wrong: send it as a bearer token or as the basic-auth password.');
  }
  return { id: row.id, label: key };
}
