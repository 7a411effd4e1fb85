/** zod with the OpenAPI extension applied once, so any schema can carry `.openapi({...})` metadata. */
import { z } from 'zod';
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';

extendZodWithOpenApi(z);

export { z };

/** A UUID (any version, as Postgres' gen_random_uuid() and clients produce). */
export const uuid = () => z.guid({ error: 'must be a UUID' });
