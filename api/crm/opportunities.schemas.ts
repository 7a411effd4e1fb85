/** Request schemas of the opportunity routes (the opportunity itself: shared/crm/crm.schemas.ts). */
import { z, uuid } from '../../shared/zod.js';
import { keysetPageQuery } from '../../shared/crm/pagination.js';

export const opportunityParams = z.object({ opportunity_id: uuid() });
export const opportunityQuery = z.object({
  account_id: uuid().optional(),
  pipeline_id: uuid().optional(),
  stage: z.string().max(100).optional(),
  q: z.string().max(200).optional(),
  ...keysetPageQuery(['created_at', 'updated_at', 'name', 'amount', 'probability', 'close_date'], '-created_at'),
});
