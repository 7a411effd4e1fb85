/** Request and response schemas of the sign-in routes. */
import { z } from '../../shared/zod.js';
import { csrfHeader } from './browser-session.js';

/** A path on this site: one leading slash, not `//host` or `/\host` (which browsers treat as another site). */
export function isLocalPath(value: string): boolean {
  return /^\/(?![/\\])/.test(value) && !/[\u0000-\u001f]/.test(value);
}

const returnTo = z
  .string()
  .max(2000)
  .refine(isLocalPath, 'must be a path on this site starting with a single /')
  .default('/')
  .openapi({ description: 'where to go after sign-in: a path on this site (e.g. /admin/alerts?status=firing)' });
export const loginQuery = z.object({ return_to: returnTo });
/** What the identity provider sends back: a code and state, or an error. */
export const callbackQuery = z.object({
  code: z.string().optional(),
  state: z.string().optional(),
  error: z.string().optional(),
  error_description: z.string().optional(),
  iss: z.string().optional(),
});
export const signOutResult = z.object({ signed_out: z.boolean().openapi({ description: 'false when there was no live session' }), end_session_url: z.string().nullable() });

export const me = z
  .object({
    subject: z.string().openapi({ description: "the provider's subject identifier" }),
    name: z.string(),
    email: z.string().nullable(),
    roles: z.array(z.enum(['sre', 'staff', 'sales', 'user'])).openapi({ description: 'sre opens the console, staff works support cases, sales works the CRM (console CRM screens), user: every signed-in person' }),
    csrf_token: z.string().openapi({ description: `send it in ${csrfHeader} with POST, PUT, PATCH and DELETE` }),
    signed_in_at: z.string(),
    expires_at: z.string().openapi({ description: 'absolute end of the session (it also ends after AUTH_SESSION_IDLE without requests)' }),
  })
  .openapi('SignedInPerson');
