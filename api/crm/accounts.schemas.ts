/** Request and response schemas of the account routes beyond the CRM's records (shared/crm/crm.schemas.ts). */
import { z, uuid } from '../../shared/zod.js';
import { keysetPageQuery } from '../../shared/crm/pagination.js';
import { account, opportunity, segments } from '../../shared/crm/crm.schemas.js';

export const accountParams = z.object({ account_id: uuid() });
export const accountQuery = z.object({ q: z.string().max(200).optional(), segment: z.enum(segments).optional(), industry: z.string().max(100).optional(), ...keysetPageQuery(['created_at', 'updated_at', 'name'], 'name') });
/** GET /api/v1/accounts/{id}: the account with its opportunities. */
export const accountDetail = account.extend({ opportunities: z.array(opportunity) }).openapi('AccountDetail');
