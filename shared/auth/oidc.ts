/**
 * The OpenID Connect relying party (openid-client v6): authorization code with PKCE, state and
 * nonce. The provider's metadata is discovered once per process from OIDC_ISSUER_URL.
 */
import * as oidc from 'openid-client';
import { config } from '../config.js';
import { ServiceUnavailableError, UpstreamError, ValidationError } from '../errors.js';
import { rolesFromClaims, type Role } from './roles.js';

export const callbackPath = '/api/global/auth/oidc/callback';
export const scope = 'openid profile email';

let discovered: Promise<oidc.Configuration> | undefined;

/** The redirect URI registered at the provider: exactly PUBLIC_URL + the callback path. */
export function redirectUri(): string {
  return config().publicUrl + callbackPath;
}

/** The provider's configuration, discovered on first use (a failed discovery is retried next time). */
export function providerConfig(): Promise<oidc.Configuration> {
  const { issuerUrl, clientId, clientSecret } = config().auth.oidc;
  if (!issuerUrl || !clientId || !clientSecret) {
    throw new ServiceUnavailableError('Sign-in is not configured: set OIDC_ISSUER_URL, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET.');
  }
  discovered ??= oidc
    .discovery(new URL(issuerUrl), clientId, clientSecret, undefined, {
      // Plain http only for a provider on this machine (dev, tests); production requires https URLs.
      execute: issuerUrl.startsWith('http://') && !config().isProduction ? [oidc.allowInsecureRequests] : [],
      timeout: 10,
    })
    .catch((err: unknown) => {
      discovered = undefined;
      throw new UpstreamError(`The identity provider at ${issuerUrl} could not be discovered: ${(err as Error).message}`);
    });
  return discovered;
}

/** Forgets the discovered provider (tests that start another provider). */
export function forgetProvider(): void {
  discovered = undefined;
}

export interface AuthorizationStart {
  url: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** The provider URL that starts a sign-in, with the values the callback must check. */
export async function startAuthorization(): Promise<AuthorizationStart> {
  const cfg = await providerConfig();
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(cfg, {
    redirect_uri: redirectUri(),
    scope,
    response_type: 'code',
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url: url.href, state, nonce, codeVerifier };
}

export interface SignedInPerson {
  subject: string;
  name: string;
  /** The email, only when the provider vouches for it (claim email_verified); otherwise null. */
  email: string | null;
  /** The provider vouches for the email (claim email_verified); only then may it match an existing user. */
  emailVerified: boolean;
  roles: Role[];
  idToken: string | null;
  /** What re-reads the person later (see rereadPerson): the access token, and the refresh token when the provider issues one. */
  accessToken: string;
  refreshToken: string | null;
}

/** The provider no longer vouches for a signed-in person: a refused refresh token or access token. */
export class SignInRevokedError extends Error {}

/**
 * Completes a sign-in from the callback's query string: exchanges the code (PKCE verifier, state and
 * nonce checked) and reads the person from the ID token claims, completed by userinfo. A refused or
 * replayed code, or a mismatched state, is a ValidationError; an unreachable provider an UpstreamError.
 */
export async function completeAuthorization(search: string, expected: { state: string; nonce: string; codeVerifier: string }): Promise<SignedInPerson> {
  const cfg = await providerConfig();
  const current = new URL(redirectUri() + search);
  let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
  try {
    tokens = await oidc.authorizationCodeGrant(cfg, current, {
      pkceCodeVerifier: expected.codeVerifier,
      expectedState: expected.state,
      expectedNonce: expected.nonce,
      idTokenExpected: true,
    });
  } catch (err) {
    throw signInError(err);
  }
  const idClaims = (tokens.claims() ?? {}) as Record<string, unknown>;
  let info: Record<string, unknown> | undefined;
  if (cfg.serverMetadata().userinfo_endpoint) {
    try {
      info = await oidc.fetchUserInfo(cfg, tokens.access_token, String(idClaims.sub));
    } catch (err) {
      throw new UpstreamError(`The identity provider's userinfo failed: ${(err as Error).message}`);
    }
  }
  return personOf(idClaims, info, { access_token: tokens.access_token, refresh_token: tokens.refresh_token ?? null, id_token: tokens.id_token ?? null });
}

/** What re-reads a signed-in person at the provider (kept with the browser session). */
export interface HeldTokens {
  access_token: string;
  refresh_token: string | null;
  id_token: string | null;
}

/** The person of ID token claims completed by userinfo (the ID token wins for the roles claim when both carry one). */
function personOf(idClaims: Record<string, unknown>, info: Record<string, unknown> | undefined, tokens: HeldTokens): SignedInPerson {
  const { rolesClaim, roleMap } = config().auth.oidc;
  const claims: Record<string, unknown> = info ? { ...info, ...idClaims, [rolesClaim]: idClaims[rolesClaim] ?? info[rolesClaim] } : { ...idClaims };
  const email = typeof claims.email === 'string' ? claims.email : null;
  const name = [claims.name, claims.preferred_username, email, claims.sub].find((v): v is string => typeof v === 'string' && v.length > 0)!;
  const emailVerified = claims.email_verified === true || claims.email_verified === 'true';
  return {
    subject: String(claims.sub),
    name,
    // An address the provider does not vouch for is kept nowhere (users, browser sessions): channels trust stored emails.
    email: emailVerified ? email : null,
    emailVerified,
    roles: rolesFromClaims(claims, rolesClaim, roleMap),
    idToken: tokens.id_token,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
  };
}

/**
 * Reads a signed-in person again from the provider, as it says now: with the refresh token when the
 * provider issued one (new tokens, userinfo with the new access token), else userinfo with the held
 * access token. A refused token (the grant was revoked, the account removed, the access token expired
 * without a refresh token) is a SignInRevokedError; an unreachable provider an UpstreamError.
 */
export async function rereadPerson(subject: string, held: HeldTokens): Promise<SignedInPerson> {
  // A session from before tokens were kept has nothing to re-read with: its person signs in again.
  if (!held.refresh_token && !held.access_token) throw new SignInRevokedError(`The session of ${subject} holds no token to re-read it with.`);
  const cfg = await providerConfig();
  let tokens = held;
  let idClaims: Record<string, unknown> = { sub: subject };
  try {
    if (held.refresh_token) {
      const fresh = await oidc.refreshTokenGrant(cfg, held.refresh_token);
      // A provider that rotates refresh tokens sends a new one; one that does not keeps the old one valid.
      tokens = { access_token: fresh.access_token, refresh_token: fresh.refresh_token ?? held.refresh_token, id_token: fresh.id_token ?? held.id_token };
      const claims = fresh.claims();
      if (claims && claims.sub !== subject) throw new SignInRevokedError('The refreshed ID token names another subject.');
      if (claims) idClaims = claims as Record<string, unknown>;
    }
    const info = cfg.serverMetadata().userinfo_endpoint ? await oidc.fetchUserInfo(cfg, tokens.access_token, subject) : undefined;
    if (!info && !held.refresh_token) throw new SignInRevokedError('The provider has neither a refresh token nor userinfo to re-read roles with.');
    return personOf(idClaims, info, tokens);
  } catch (err) {
    if (err instanceof SignInRevokedError) throw err;
    if (refusedToken(err)) throw new SignInRevokedError(`The identity provider refused to vouch for ${subject} again: ${(err as Error).message}`);
    throw new UpstreamError(`The identity provider could not be reached to re-read ${subject}: ${(err as Error).message}`);
  }
}

/** Whether the provider refused a token (as opposed to failing): a revoked grant, an expired access token, another subject. */
function refusedToken(err: unknown): boolean {
  if (err instanceof oidc.ResponseBodyError) return err.error === 'invalid_grant' || err.error === 'invalid_token';
  if (err instanceof oidc.WWWAuthenticateChallengeError) return err.status === 401;
  return err instanceof oidc.ClientError && (err.code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' || err.code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED');
}

function signInError(err: unknown): Error {
  if (err instanceof oidc.ResponseBodyError) {
    return new ValidationError(`The identity provider refused the sign-in code (${err.error}${err.error_description ? `: ${err.error_description}` : ''}). It may have been used already or expired.`);
  }
  if (err instanceof oidc.AuthorizationResponseError) {
    return new ValidationError(`The identity provider ended the sign-in: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}.`);
  }
  if (err instanceof oidc.ClientError) return new ValidationError(`The sign-in response failed a check: ${err.message}.`);
  return new UpstreamError(`The identity provider could not be reached: ${(err as Error).message}`);
}

/** The provider's end-session URL for a person's ID token, when the provider has one. */
export async function endSessionUrl(idToken: string | null): Promise<string | null> {
  const cfg = await providerConfig().catch(() => undefined);
  if (!cfg?.serverMetadata().end_session_endpoint) return null;
  const params: Record<string, string> = { post_logout_redirect_uri: config().publicUrl + '/' };
  if (idToken) params.id_token_hint = idToken;
  return oidc.buildEndSessionUrl(cfg, params).href;
}
