/** Schemas of the live CRM event stream. */
import { z } from '../../shared/zod.js';
import { crmEventTypes } from '../../shared/crm/events.js';
import { csv } from '../sre/common.schemas.js';

export const crmEvent = z
  .object({
    id: z.string().openapi({ description: 'event id (also the SSE id)' }),
    type: z.enum(crmEventTypes),
    at: z.string().openapi({ format: 'date-time' }),
    data: z.record(z.string(), z.unknown()).openapi({ description: 'ids and the new state, e.g. {id, status, by} of lead.changed' }),
  })
  .openapi('CrmEvent');
export const crmEventQuery = z.object({ types: csv(crmEventTypes) });
