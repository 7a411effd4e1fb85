/** Schemas of the account routes beyond the CRM's records (shared/crm/crm.schemas.ts). */
import { z } from '../../shared/zod.js';
import { account, opportunity } from '../../shared/crm/crm.schemas.js';

/** GET /api/v1/accounts/{id}: the account with its opportunities. */
export const accountDetail = account.extend({ opportunities: z.array(opportunity) }).openapi('AccountDetail');
