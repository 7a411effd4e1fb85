/** Request schemas of the lead routes (the lead itself: shared/crm/crm.schemas.ts). */
import { z, uuid } from '../../shared/zod.js';
import { keysetPageQuery } from '../../shared/crm/pagination.js';
import { leadStatus } from '../../shared/crm/crm.schemas.js';

export const leadParams = z.object({ lead_id: uuid() });
export const leadQuery = z.object({ status: leadStatus.optional(), source: z.string().max(100).optional(), q: z.string().max(200).optional(), ...keysetPageQuery(['created_at', 'updated_at', 'first_name', 'last_name', 'company', 'status'], '-created_at') });
