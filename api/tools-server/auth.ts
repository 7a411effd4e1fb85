/**
 * Who may call the issue-tracker tool server: a bearer token, either one of MCP_SERVICE_TOKENS or, with
 * IDENTITY_BASE_URL, a JWT of that identity provider (keys from the JWKS its discovery document names;
 * issuer and audience checked, RFC 9068 / the MCP authorization spec's audience rule).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, errors as joseErrors } from 'jose';

/** The token was missing or is not accepted: a 401 with WWW-Authenticate. */
export class InvalidTokenError extends Error {}
/** The token could not be checked (identity provider unreachable): a 503, not the caller's fault. */
export class TokenCheckUnavailableError extends Error {}

export interface Caller {
  /** Who it is: the JWT's sub, or "service-token:<n>" for the n-th configured token. */
  subject: string;
}

export interface BearerAuth {
  verify(token: string): Promise<Caller>;
  /** The identity provider (for the protected-resource metadata), when tokens come from one. */
  identityBaseUrl?: string;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Accepts exactly the given tokens (compared in constant time). */
export function serviceTokens(tokens: string[]): BearerAuth {
  const digests = tokens.map(digest);
  return {
    async verify(token) {
      const given = digest(token);
      const index = digests.findIndex((d) => timingSafeEqual(d, given));
      if (index < 0) throw new InvalidTokenError('the token is not one of the accepted service tokens');
      return { subject: `service-token:${index + 1}` };
    },
  };
}

/** The scope a provider's access token must carry for this server. */
export const requiredScope = 'mcp';

/** Accepts JWT access tokens (typ at+jwt, scope mcp) signed by the provider at baseUrl, for one of the audiences. */
export function identityProviderTokens(baseUrl: string, audiences: string[], fetchTimeoutMs = 5000): BearerAuth {
  let keys: Promise<{ issuer: string; jwks: ReturnType<typeof createRemoteJWKSet> }> | undefined;
  const discover = async () => {
    const url = `${baseUrl.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    let doc: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(fetchTimeoutMs), headers: { Accept: 'application/json' } });
      if (!res.ok) throw new Error(`answered ${res.status}`);
      doc = await res.json();
    } catch (err) {
      throw new TokenCheckUnavailableError(`identity provider discovery at ${url} failed: ${(err as Error).message}`);
    }
    if (typeof doc.issuer !== 'string' || typeof doc.jwks_uri !== 'string') throw new TokenCheckUnavailableError(`${url} names no issuer or jwks_uri`);
    return { issuer: doc.issuer, jwks: createRemoteJWKSet(new URL(doc.jwks_uri), { timeoutDuration: fetchTimeoutMs }) };
  };
  return {
    identityBaseUrl: baseUrl,
    async verify(token) {
      // A failed discovery is retried on the next request rather than remembered.
      keys ??= discover().catch((err) => {
        keys = undefined;
        throw err;
      });
      const { issuer, jwks } = await keys;
      let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'];
      try {
        // An access token (RFC 9068 typ at+jwt), not an ID token of the same provider.
        ({ payload } = await jwtVerify(token, jwks, { issuer, audience: audiences, typ: 'at+jwt' }));
      } catch (err) {
        // Not a verdict on the token: the key set could not be fetched (network, timeout, a non-200 answer).
        if (!(err instanceof joseErrors.JOSEError) || err instanceof joseErrors.JWKSTimeout || err.code === 'ERR_JOSE_GENERIC') {
          throw new TokenCheckUnavailableError(`the identity provider's keys could not be read: ${(err as Error).message}`);
        }
        throw new InvalidTokenError(err.message);
      }
      const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ') : [];
      if (!scopes.includes(requiredScope)) throw new InvalidTokenError(`the token lacks the scope ${requiredScope}`);
      return { subject: String(payload.sub ?? payload.client_id ?? 'unknown') };
    },
  };
}

/** The token of an Authorization: Bearer header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}
