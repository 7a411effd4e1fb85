/**
 * The tool server accepts a provider's JWT only as an access token for it: `typ` at+jwt (RFC 9068, so
 * an ID token of the same provider and audience is refused) and the scope mcp.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { identityProviderTokens, InvalidTokenError } from '../../api/tools-server/auth.js';

const { publicKey, privateKey } = await generateKeyPair('RS256');
const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
const provider = createServer((req, res) => {
  const json = (v: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
  if (req.url === '/.well-known/openid-configuration') return json({ issuer, jwks_uri: `${issuer}/jwks` });
  if (req.url === '/jwks') return json({ keys: [jwk] });
  res.writeHead(404).end();
});
await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
const issuer = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
afterAll(() => new Promise<void>((r) => provider.close(() => r())));

const audience = 'http://tools.example:9400/mcp';
const tokens = identityProviderTokens(issuer, [audience]);
const sign = (claims: Record<string, unknown>, typ?: string) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1', ...(typ ? { typ } : {}) }).setIssuer(issuer).setAudience(audience).setSubject('client-1').setIssuedAt().setExpirationTime('5m').sign(privateKey);

describe('identity-provider tokens of the tool server', () => {
  it('accepts an access token (typ at+jwt) with the scope mcp', async () => {
    expect(await tokens.verify(await sign({ scope: 'openid mcp' }, 'at+jwt'))).toEqual({ subject: 'client-1' });
  });

  it('refuses an ID token or a token without typ, even with the right issuer, audience and scope', async () => {
    await expect(tokens.verify(await sign({ scope: 'mcp' }, 'JWT'))).rejects.toBeInstanceOf(InvalidTokenError);
    await expect(tokens.verify(await sign({ scope: 'mcp' }))).rejects.toBeInstanceOf(InvalidTokenError);
  });

  it('refuses an access token without the scope mcp', async () => {
    await expect(tokens.verify(await sign({ scope: 'openid profile' }, 'at+jwt'))).rejects.toThrow(/scope mcp/);
    await expect(tokens.verify(await sign({}, 'at+jwt'))).rejects.toBeInstanceOf(InvalidTokenError);
  });
});
