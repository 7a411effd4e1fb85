/** Schemas of the live SRE event stream. */
import { z } from '../../../shared/zod.js';
import { sreEventTypes } from '../../../shared/sre/events.js';
import { csv } from '../common.schemas.js';

export const sreEvent = z
  .object({
    id: z.string().openapi({ description: 'event id (also the SSE id)' }),
    type: z.enum(sreEventTypes),
    at: z.string().openapi({ format: 'date-time' }),
    data: z.record(z.string(), z.unknown()).openapi({ description: 'ids and the new state, e.g. {id, fingerprint, status, by} of alert.changed' }),
  })
  .openapi('SreEvent');
export const sreEventQuery = z.object({ types: csv(sreEventTypes) });
