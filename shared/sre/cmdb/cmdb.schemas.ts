/** The CMDB's vocabulary: entity types, health values, relationship types, and what a discovery source yields. */
import { z } from '../../zod.js';

export const entityTypes = ['container', 'compose_project', 'scrape_job', 'scrape_target', 'router', 'proxy_service', 'hostname'] as const;
export type EntityType = (typeof entityTypes)[number];

export const healthValues = ['healthy', 'degraded', 'unhealthy', 'down', 'unknown'] as const;
export type Health = (typeof healthValues)[number];

export const relationshipTypes = ['part_of', 'runs_on', 'routes_to', 'scraped_by', 'depends_on'] as const;
export type RelationshipType = (typeof relationshipTypes)[number];

export const sourceKinds = ['docker', 'prometheus', 'traefik'] as const;
export type SourceKind = (typeof sourceKinds)[number];

/** One entity as a source reports it; upserted by (source, type, natural_key). */
export interface DiscoveredEntity {
  type: EntityType;
  natural_key: string;
  name: string;
  /** Only stable facts: anything that changes without a real change (uptimes, scrape times) stays out, so a re-run writes nothing. */
  attributes: Record<string, unknown>;
  health: Health;
}

export const healthSchema = z.enum(healthValues);
export const entityTypeSchema = z.enum(entityTypes);
export const relationshipTypeSchema = z.enum(relationshipTypes);
export const sourceKindSchema = z.enum(sourceKinds);

/** Health of a group from its members': all healthy → healthy, none healthy → down, else degraded. */
export function groupHealth(members: Health[]): Health {
  if (members.length === 0) return 'unknown';
  const healthy = members.filter((h) => h === 'healthy').length;
  if (healthy === members.length) return 'healthy';
  if (members.every((h) => h === 'unknown')) return 'unknown';
  if (healthy === 0 && members.every((h) => h === 'down' || h === 'unhealthy')) return 'down';
  return 'degraded';
}

const sorted = <T>(items: Iterable<T>) => [...new Set(items)].sort();

/** host and host:port of an address such as http://10.0.0.5:8080/path or 10.0.0.5:8080. */
export function hostAndPort(address: string): { host: string; endpoint: string } | null {
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(address) ? address : `http://${address}`);
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return { host, endpoint: `${host}:${port}` };
  } catch {
    return null;
  }
}

export { sorted };
