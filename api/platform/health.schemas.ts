/** Response schemas of the health routes. */
import { z } from '../../shared/zod.js';

export const liveness = z.object({ status: z.literal('ok') });
const checkState = z.enum(['up', 'down']);
export const readiness = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    checks: z.object({
      postgres: checkState,
      redis: checkState,
      migrations: z.enum(['current', 'pending', 'unknown']),
    }),
    pending_migrations: z.array(z.string()).optional(),
  })
  .openapi('Readiness');
/** GET /api/health: readiness with the process's uptime and version. */
export const health = readiness.extend({ uptime_seconds: z.number(), version: z.string() });
/** The Prometheus text format. */
export const metricsText = z.string();
