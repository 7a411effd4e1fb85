/** Request and response schemas of the API key routes. */
import { z, uuid } from '../../shared/zod.js';
import { scopes, type Scope } from '../../shared/auth/scopes.js';

const scopeEnum = z.enum(scopes as [Scope, ...Scope[]]);
export const apiKeySchema = z
  .object({
    id: uuid(),
    name: z.string(),
    scopes: z.array(scopeEnum),
    created_by: z.string(),
    revoked_at: z.date().nullable().openapi({ type: 'string', format: 'date-time' }),
    created_at: z.date().openapi({ type: 'string', format: 'date-time' }),
  })
  .openapi('ApiKey');
export const apiKeyCreate = z
  .object({
    name: z.string().regex(/^(?![0-9a-f]{16}$)[a-z0-9][a-z0-9._-]{0,62}$/, 'lower-case letters, digits, . _ -; up to 63 characters, not 16 hex digits'),
    scopes: z.array(scopeEnum).min(1),
  })
  .strict();
/** The one answer that carries the key itself. */
export const newApiKey = apiKeySchema.extend({ key: z.string() }).openapi('NewApiKey');
export const apiKeyQuery = z.object({ include_revoked: z.enum(['true', 'false']).default('false') });
export const apiKeyList = z.object({ items: z.array(apiKeySchema) });
export const apiKeyParams = z.object({ id: uuid() });
