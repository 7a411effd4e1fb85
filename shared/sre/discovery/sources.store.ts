/** Query module of sre_discovery_sources: the systems discovery reads, seeded from configuration. */
import { db } from '../../db/index.js';
import { config } from '../../config.js';
import { isUniqueViolation } from '../../db/index.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import type { SourceKind } from '../cmdb/cmdb.schemas.js';
import { lockRunningRun } from './runs.store.js';

const TABLE = 'sre_discovery_sources';

interface SourceRow {
  id: string;
  name: string;
  kind: SourceKind;
  address: string;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface DiscoverySource extends SourceRow {
  /** Configuration names this source: it is re-seeded at every run, so it can be disabled but not deleted. */
  configured: boolean;
}

/** The sources configuration names (CONTAINER_RUNTIME_HOST, METRICS_URL, PROXY_API_URL), by the name they get. */
export function configuredSources(): Array<Pick<SourceRow, 'name' | 'kind' | 'address'>> {
  const d = config().sre.discovery;
  return [
    d.containerRuntimeHost ? { name: 'docker', kind: 'docker' as const, address: d.containerRuntimeHost } : null,
    d.metricsUrl ? { name: 'prometheus', kind: 'prometheus' as const, address: d.metricsUrl } : null,
    d.proxyApiUrl ? { name: 'traefik', kind: 'traefik' as const, address: d.proxyApiUrl } : null,
  ].filter((s) => s !== null);
}

function isConfigured(source: Pick<SourceRow, 'name'>): boolean {
  return configuredSources().some((c) => c.name === source.name);
}

function toDomain(row: SourceRow): DiscoverySource {
  return { ...row, configured: isConfigured(row) };
}

/** Upserts the configured sources; writes only when a kind or address changed. */
export async function seedConfiguredSources(): Promise<void> {
  const rows = configuredSources();
  if (!rows.length) return;
  await db().raw(
    `insert into ${TABLE} as s (name, kind, address)
     select * from jsonb_to_recordset(?::jsonb) as x(name text, kind text, address text)
     on conflict (name) do update set kind = excluded.kind, address = excluded.address
     where (s.kind, s.address) is distinct from (excluded.kind, excluded.address)`,
    [JSON.stringify(rows)],
  );
}

export async function listSources(filter: { enabled?: boolean } = {}): Promise<DiscoverySource[]> {
  const q = db()<SourceRow>(TABLE).orderBy('name');
  if (filter.enabled !== undefined) q.where({ enabled: filter.enabled });
  return (await q).map(toDomain);
}

export async function createSource(input: { name: string; kind: SourceKind; address: string; enabled?: boolean }): Promise<DiscoverySource> {
  try {
    const [row] = await db()<SourceRow>(TABLE).insert({ ...input, enabled: input.enabled ?? true }).returning('*');
    return toDomain(row as SourceRow);
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`A discovery source named "${input.name}" exists.`);
    throw err;
  }
}

export async function getSource(id: string): Promise<DiscoverySource> {
  const row = await db()<SourceRow>(TABLE).where({ id }).first();
  if (!row) throw new NotFoundError(`Discovery source ${id} does not exist.`);
  return toDomain(row);
}

export async function updateSource(id: string, patch: { address?: string; enabled?: boolean }): Promise<DiscoverySource> {
  const [row] = await db()<SourceRow>(TABLE).where({ id }).update(patch).returning('*');
  if (!row) throw new NotFoundError(`Discovery source ${id} does not exist.`);
  return toDomain(row as SourceRow);
}

/**
 * Deletes a discovery source with its entities (and their relationships, recommendations and
 * monitors) and its run records. A source seeded from configuration would come back at the next
 * run: 409 (disable it, or unset its variable, instead). While a run is running: 409 naming it, since
 * the run reads every source it listed at its start and would fail writing the deleted one's entities.
 */
export async function deleteSource(id: string): Promise<void> {
  await db().transaction(async (trx) => {
    const source = await trx<SourceRow>(TABLE).where({ id }).first();
    if (!source) throw new NotFoundError(`Discovery source ${id} does not exist.`);
    if (isConfigured(source)) {
      throw new ConflictError(`Source "${source.name}" comes from configuration and would be recreated at the next run; disable it instead (PATCH enabled=false).`);
    }
    // Held until commit, so no run can open and list this source before it is gone.
    const running = await lockRunningRun(trx);
    if (running) {
      throw new ConflictError(`Discovery run ${running.id} is in progress; delete the source "${source.name}" once it has ended.`, [], { run_id: running.id });
    }
    await trx(TABLE).where({ id }).delete();
  });
}
