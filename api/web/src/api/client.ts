/**
 * The typed API client: openapi-fetch over the types generated from /api/openapi.json, and
 * openapi-react-query hooks over it. Same origin, so the session cookie travels by itself;
 * unsafe methods carry the CSRF token the session handed out (see setCsrfToken).
 */
import createFetchClient, { type Middleware } from 'openapi-fetch';
import createQueryHooks from 'openapi-react-query';
import { QueryClient } from '@tanstack/react-query';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];
export type Problem = Schemas['Problem'];

let csrfToken: string | undefined;
/** Remembers the CSRF token of the signed-in session (from /api/global/auth/me). */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

const csrf: Middleware = {
  onRequest({ request }) {
    if (csrfToken && !['GET', 'HEAD', 'OPTIONS'].includes(request.method)) request.headers.set('X-CSRF-Token', csrfToken);
    return request;
  },
};

export const fetchClient = createFetchClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin' });
fetchClient.use(csrf);

/** TanStack Query hooks typed by the API's paths: $api.useQuery('get', '/api/v1/alerts', …). */
export const $api = createQueryHooks(fetchClient);

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: { staleTime: 5_000, retry: (count, error) => count < 2 && !isProblem(error) },
  },
});

/** Whether a thrown value is an RFC 9457 problem document from our API. */
export function isProblem(value: unknown): value is Problem {
  return typeof value === 'object' && value !== null && 'title' in value && 'status' in value;
}

/** Invalidates every cached GET whose path starts with one of the prefixes (query keys are [method, path, init]). */
export function invalidatePaths(...prefixes: string[]): Promise<void> {
  return queryClient.invalidateQueries({
    predicate: (q) => typeof q.queryKey[1] === 'string' && prefixes.some((p) => (q.queryKey[1] as string).startsWith(p)),
  });
}
