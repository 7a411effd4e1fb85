/** Offset pagination (`limit`, `offset`, `total`) and filters of the alerting lists (alerts, incidents, runbooks, executions) and the tool-call audit; the CRM pages by keyset instead (shared/crm/pagination.ts). */
import type { Knex } from 'knex';
import { z } from '../zod.js';

const labelFilter = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : [v]))
  .pipe(z.array(z.string().regex(/^[^=]+=.*$/, 'must be name=value')))
  .transform((pairs) => Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)])));

/** Query parameters every list accepts. */
export const offsetPageQuery = {
  limit: z.coerce.number().int().min(1).max(500).default(50).openapi({ description: 'page size (1-500, default 50)' }),
  offset: z.coerce.number().int().min(0).default(0).openapi({ description: 'rows to skip' }),
  since: z.iso.datetime({ offset: true }).optional().openapi({ description: 'only rows at or after this time (RFC 3339)' }),
  until: z.iso.datetime({ offset: true }).optional().openapi({ description: 'only rows before this time (RFC 3339)' }),
};

/** `label=name=value`, repeatable; every pair must match. */
export const labelQuery = labelFilter.optional().openapi({ description: 'label filter `name=value`, repeatable (all must match)', type: 'string' });

export interface OffsetPage<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
}

/** A page schema for the API reference. */
export const offsetPageSchema = <T extends z.ZodType>(item: T, name: string) =>
  z.object({ items: z.array(item), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }).openapi(name);

/** Runs a filtered query as one page; the total comes from the same statement (count(*) over ()). */
export async function paged<R, T>(
  query: Knex.QueryBuilder,
  opts: { limit: number; offset: number; orderBy: string; timeColumn: string; since?: string; until?: string },
  toDomain: (row: R) => T,
): Promise<OffsetPage<T>> {
  if (opts.since) query.where(opts.timeColumn, '>=', opts.since);
  if (opts.until) query.where(opts.timeColumn, '<', opts.until);
  const rows = (await query
    .select(query.client.raw('count(*) over () as total_count'))
    .orderByRaw(opts.orderBy)
    .limit(opts.limit)
    .offset(opts.offset)) as Array<R & { total_count: number }>;
  let total = rows[0]?.total_count ?? 0;
  if (!rows.length && opts.offset > 0) {
    const counted = (await query.clone().clearSelect().clearOrder().clear('limit').clear('offset').count({ n: '*' }).first()) as { n: number } | undefined;
    total = Number(counted?.n ?? 0);
  }
  return { items: rows.map(toDomain), total, limit: opts.limit, offset: opts.offset };
}
