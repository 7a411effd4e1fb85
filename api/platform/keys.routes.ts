/** Named, scoped API keys: create (the key is shown once), list, revoke; effective without a restart. */
import type { Context } from 'koa';
import { ApiRouter } from '../routing.js';
import { ForbiddenError } from '../../shared/errors.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../../shared/auth/api-keys.store.js';
import { forgetNamedKeys } from '../../shared/auth/api-keys.js';
import { hasScope, scopeDescriptions, type Authority, type Scope } from '../../shared/auth/scopes.js';
import { personOf } from '../auth/browser-session.js';
import { apiKeyCreate, apiKeyList, apiKeyParams, apiKeyQuery, apiKeySchema, newApiKey } from './keys.schemas.js';

const tags = ['keys'];
/** Who creates a key: the signed-in person, or the key that asked. */
function creatorOf(ctx: Context): string {
  const person = personOf(ctx);
  return person ? `person:${person.email ?? person.subject}` : String(ctx.state.apiKeyId);
}

/**
 * A key grants only scopes it holds itself, and revokes only keys with no scope it lacks (else a
 * `keys`-scoped key could switch off full-access ones); an sre person may do either with any key.
 */
function checkHeld(ctx: Context, wanted: readonly Scope[], what: 'grant' | 'revoke', path: string): void {
  const authority = ctx.state.authority as Authority | undefined;
  if (authority?.kind !== 'key') return;
  const missing = wanted.filter((s) => !hasScope(authority.scopes, s));
  if (!missing.length) return;
  const sentence = what === 'grant' ? 'A key can only grant scopes it holds' : 'A key can only revoke keys whose scopes it holds';
  throw new ForbiddenError(`${sentence}; this one lacks ${missing.join(', ')}.`, missing.map((s) => ({ path, message: `not held: ${s}` })));
}

const scopeList = Object.entries(scopeDescriptions).map(([s, d]) => `\`${s}\` (${d})`).join('; ');

export function keyRoutes(): ApiRouter {
  return new ApiRouter()
    .route({
      method: 'post',
      path: '/api/v1/keys',
      tags,
      summary: 'Create a named, scoped API key',
      description: `The answer carries the key once (\`key\`); only its SHA-256 is stored. Scopes: ${scopeList}. A key may grant only scopes it holds; a browser session needs the sre role. A name is never reused (409, even after a revoke), so audit rows (\`key:<name>\`) keep naming one key.`,
      auth: 'key-or-sre',
      request: { body: apiKeyCreate },
      responses: { 201: { description: 'Created; `key` is shown only now', schema: newApiKey } },
      errors: { 409: 'The name is taken (names are never reused)' },
      handler: async ({ body }, ctx) => {
        checkHeld(ctx, body.scopes, 'grant', 'body.scopes');
        const { key, row } = await createApiKey({ name: body.name, scopes: body.scopes, created_by: creatorOf(ctx) });
        return { ...row, key };
      },
    })
    .route({
      method: 'get',
      path: '/api/v1/keys',
      tags,
      summary: 'List API keys (never the keys themselves)',
      description: 'Named keys, newest first; revoked ones with `include_revoked=true`. The keys of API_KEYS (full access, from the environment) are not listed.',
      auth: 'key-or-sre',
      request: { query: apiKeyQuery },
      responses: { 200: { description: 'The keys', schema: apiKeyList } },
      handler: async ({ query }) => ({ items: await listApiKeys(query.include_revoked === 'true') }),
    })
    .route({
      method: 'delete',
      path: '/api/v1/keys/{id}',
      tags,
      summary: 'Revoke an API key',
      description: 'Idempotent. This process refuses the key at once; other API processes within API_KEY_CACHE_MS (default 5 s). No restart. A key may revoke only keys whose every scope it holds (403 naming the ones it lacks); a browser session needs the sre role.',
      auth: 'key-or-sre',
      request: { params: apiKeyParams },
      responses: { 200: { description: 'Revoked', schema: apiKeySchema } },
      errors: { 403: 'The calling key lacks a scope of the key to revoke, or the signed-in person lacks the sre role' },
      handler: async ({ params }, ctx) => {
        const row = await revokeApiKey(params.id, (key) => checkHeld(ctx, key.scopes, 'revoke', 'params.id'));
        forgetNamedKeys();
        return row;
      },
    });
}
