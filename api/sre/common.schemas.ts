/** Schema pieces shared by the SRE alerting routes (alerts, incidents, runbooks). */
import { z, uuid } from '../../shared/zod.js';

export const labels = z.record(z.string(), z.string());
export const ts = z.string().openapi({ format: 'date-time' });
export const csv = <const T extends readonly [string, ...string[]]>(values: T) =>
  z
    .string()
    .transform((s) => s.split(',').map((v) => v.trim()).filter(Boolean))
    .pipe(z.array(z.enum(values)))
    .optional()
    .openapi({ description: `comma-separated: ${values.join(', ')}`, type: 'string' });
export const csvText = z
  .string()
  .transform((s) => s.split(',').map((v) => v.trim()).filter(Boolean))
  .optional()
  .openapi({ description: 'comma-separated values', type: 'string' });
export const bool = z.enum(['true', 'false']).transform((v) => v === 'true').optional().openapi({ type: 'string', enum: ['true', 'false'] });

export const idParams = z.object({ id: uuid() });
export const actorBody = z.object({
  by: z.string().min(1).max(200).default('api').openapi({ description: 'who or what makes the move (user, agent, tool); default "api". A browser session records the signed-in person instead' }),
  note: z.string().max(2000).optional(),
});
