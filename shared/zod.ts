/** zod with the OpenAPI extension applied once, so any schema can carry `.openapi({...})` metadata. */
import { z } from 'zod';
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';

extendZodWithOpenApi(z);

export { z };

/** A UUID (any version, as Postgres' gen_random_uuid() and clients produce). */
export const uuid = () => z.guid({ error: 'must be a UUID' });

/** A timestamp in a response, as handlers read it from Postgres (a Date); JSON sends it as an RFC 3339 string. */
export const timestamp = () => z.date().openapi({ type: 'string', format: 'date-time' });
/** timestamp() or null (the OpenAPI type is set whole: metadata on a nullable date would drop the null). */
export const nullableTimestamp = () => z.date().nullable().openapi({ type: ['string', 'null'], format: 'date-time' });
