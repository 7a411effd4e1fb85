/** Schema pieces shared by the CMDB, discovery and monitor routes. */
import { z, uuid } from '../../../shared/zod.js';

export const timestamp = z.date().openapi({ type: 'string', format: 'date-time' });
export const booleanQuery = z.enum(['true', 'false']).transform((v) => v === 'true');
export const page = {
  limit: z.coerce.number().int().min(1).max(500).default(50),
  offset: z.coerce.number().int().min(0).default(0),
};

export const idParams = z.object({ id: uuid() });
