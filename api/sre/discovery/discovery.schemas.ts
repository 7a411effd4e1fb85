/** Request and response schemas of the discovery routes (runs, sources, status). */
import { z } from '../../../shared/zod.js';
import { sourceKindSchema } from '../../../shared/sre/cmdb/cmdb.schemas.js';
import { timestamp } from '../cmdb/common.schemas.js';

export const runSchema = z
  .object({
    id: z.string(),
    trigger: z.enum(['schedule', 'manual']),
    slot: timestamp.nullable(),
    status: z.enum(['running', 'succeeded', 'partial', 'failed']),
    started_at: timestamp,
    finished_at: timestamp.nullable(),
    added: z.number().int(),
    updated: z.number().int(),
    unchanged: z.number().int(),
    stale: z.number().int(),
    rows_written: z.number().int(),
    errors: z.record(z.string(), z.string()),
  })
  .openapi('DiscoveryRun');

export const triggerResponse = z
  .object({ run_id: z.string(), status: runSchema.shape.status, started_at: timestamp, already_running: z.boolean() })
  .openapi('DiscoveryTriggered');

export const sourceSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: sourceKindSchema,
    address: z.string(),
    enabled: z.boolean(),
    configured: z.boolean().openapi({
      description: 'Read-only. True while configuration (CONTAINER_RUNTIME_HOST, METRICS_URL, PROXY_API_URL) names this source: it is re-seeded at every run, so it can be disabled but not deleted (DELETE answers 409).',
    }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('DiscoverySource');

export const sourceList = z.object({ items: z.array(sourceSchema) });
export const sourceCreate = z.object({
  name: z.string().min(1).max(100).regex(/^[a-z0-9][a-z0-9_.-]*$/, 'lower-case letters, digits, . _ -'),
  kind: sourceKindSchema,
  address: z.string().min(1).max(2000).openapi({ description: 'docker: tcp://host:port or a unix socket path; prometheus and traefik: base URL' }),
  enabled: z.boolean().optional(),
});
export const sourcePatch = z
  .object({ address: sourceCreate.shape.address.optional(), enabled: z.boolean().optional() })
  .refine((p) => p.address !== undefined || p.enabled !== undefined, 'give address or enabled');

const outcomeSchema = z.object({
  run_id: z.string(),
  status: z.enum(['succeeded', 'failed']),
  started_at: timestamp,
  finished_at: timestamp,
  seen: z.number().int(),
  added: z.number().int(),
  updated: z.number().int(),
  unchanged: z.number().int(),
  stale: z.number().int(),
  error: z.string().nullable(),
});

export const statusQuery = z.object({
  per_source: z.coerce.number().int().min(1).max(50).default(5),
  runs: z.coerce.number().int().min(1).max(100).default(10),
});
export const statusSchema = z
  .object({
    running: runSchema.nullable(),
    sources: z.array(sourceSchema.extend({ last_runs: z.array(outcomeSchema) })),
    runs: z.array(runSchema),
  })
  .openapi('DiscoveryStatus');
