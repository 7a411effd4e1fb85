/** Query module of sre_discovery_sources: the systems discovery reads, seeded from configuration. */
import { db } from '../../db/index.js';
import { config } from '../../config.js';
import { isUniqueViolation } from '../../db/index.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import type { SourceKind } from '../cmdb/model.js';

const TABLE = 'sre_discovery_sources';

export interface DiscoverySource {
  id: string;
  name: string;
  kind: SourceKind;
  address: string;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

/** The sources configuration names (CONTAINER_RUNTIME_HOST, METRICS_URL, PROXY_API_URL), by the name they get. */
export function configuredSources(): Array<Pick<DiscoverySource, 'name' | 'kind' | 'address'>> {
  const d = config().sre.discovery;
  return [
    d.containerRuntimeHost ? { name: 'docker', kind: 'docker' as const, address: d.containerRuntimeHost } : null,
    d.metricsUrl ? { name: 'prometheus', kind: 'prometheus' as const, address: d.metricsUrl } : null,
    d.proxyApiUrl ? { name: 'traefik', kind: 'traefik' as const, address: d.proxyApiUrl } : null,
  ].filter((s) => s !== null);
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
  const q = db()<DiscoverySource>(TABLE).orderBy('name');
  if (filter.enabled !== undefined) q.where({ enabled: filter.enabled });
  return q;
}

export async function createSource(input: { name: string; kind: SourceKind; address: string; enabled?: boolean }): Promise<DiscoverySource> {
  try {
    const [row] = await db()<DiscoverySource>(TABLE).insert({ ...input, enabled: input.enabled ?? true }).returning('*');
    return row!;
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`A discovery source named "${input.name}" exists.`);
    throw err;
  }
}

export async function getSource(id: string): Promise<DiscoverySource> {
  const row = await db()<DiscoverySource>(TABLE).where({ id }).first();
  if (!row) throw new NotFoundError(`Discovery source ${id} does not exist.`);
  return row;
}

export async function updateSource(id: string, patch: { address?: string; enabled?: boolean }): Promise<DiscoverySource> {
  const [row] = await db()<DiscoverySource>(TABLE).where({ id }).update(patch).returning('*');
  if (!row) throw new NotFoundError(`Discovery source ${id} does not exist.`);
  return row;
}
