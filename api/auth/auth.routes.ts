/** Sign-in with OpenID Connect, sign-out, and who is signed in. */
import { ApiRouter } from '../routing.js';
import { ValidationError } from '../../shared/errors.js';
import { completeAuthorization, endSessionUrl, startAuthorization } from '../../shared/auth/oidc.js';
import { takeLimit } from '../../shared/limits.js';
import { createAuthSession, deleteAuthSession, savePendingLogin, sweepAuthSessions, takePendingLogin } from '../../shared/auth/auth-sessions.store.js';
import { browserSession, csrfHeader, loginCookie, personOf, sessionCookie, setCookie } from './browser-session.js';
import { checkCsrf } from '../middleware/auth.js';
import { upsertSignedInUser } from '../../shared/users/sign-in.js';
import { sendSignInErrorPage } from './error-page.js';
import { callbackQuery, loginQuery, me, signOutResult } from './auth.schemas.js';

const tags = ['Sign-in'];

const signInNote =
  'Authorization code flow with PKCE (S256), `state` and `nonce`, against the provider discovered from OIDC_ISSUER_URL; the redirect URI is exactly PUBLIC_URL + /api/global/auth/oidc/callback. A sign-in must complete within 10 minutes.';

export function authRoutes(): ApiRouter {
  return new ApiRouter()
    .route({
      method: 'get',
      path: '/api/global/auth/login',
      tags,
      summary: 'Start signing in',
      description: `Redirects to the identity provider. ${signInNote}`,
      auth: 'public',
      request: { query: loginQuery },
      responses: { 302: { description: 'to the identity provider' } },
      errors: { 429: 'Over LIMIT_SIGNIN_STARTS_PER_MINUTE sign-in starts from this address (Retry-After)', 502: 'The identity provider could not be discovered', 503: 'Sign-in is not configured' },
      handler: async ({ query }, ctx) => {
        // Each start stores a row until it completes or expires: anonymous starts are limited per address.
        await takeLimit('signInStarts', ctx.ip);
        try {
          const start = await startAuthorization();
          await savePendingLogin({ state: start.state, nonce: start.nonce, code_verifier: start.codeVerifier, return_to: query.return_to });
          setCookie(ctx, loginCookie, start.state, new Date(Date.now() + 10 * 60_000));
          ctx.set('Cache-Control', 'no-store');
          ctx.redirect(start.url);
        } catch (err) {
          sendSignInErrorPage(ctx, err);
        }
      },
    })
    .route({
      method: 'get',
      path: '/api/global/auth/oidc/callback',
      tags,
      summary: 'Sign-in callback of the identity provider',
      description: `Checks \`state\` against the sign-in this browser started (used once), exchanges the code with the PKCE verifier, checks the ID token's nonce, reads name, email and roles (OIDC_ROLES_CLAIM of the ID token or userinfo, mapped by OIDC_ROLE_MAP), matches the person to a users row (by subject, else verified email, else a new row; email, name and roles copied), creates the server-side session (keeping the access token, and the refresh token when the provider issues one, to re-read the person every AUTH_ROLES_REFRESH) and sets its httpOnly cookie \`${sessionCookie}\`. Failures end on an HTML page (400 for a tampered state or a refused/replayed code).`,
      auth: 'public',
      request: { query: callbackQuery },
      responses: { 302: { description: 'signed in: to the return_to path' } },
      errors: { 400: 'The sign-in failed (HTML page): state does not match, expired or used, or the code was refused', 502: 'The identity provider could not be reached' },
      handler: async ({ query }, ctx) => {
        try {
          const expected = ctx.cookies.get(loginCookie);
          setCookie(ctx, loginCookie, null);
          if (query.error) {
            throw new ValidationError(`The identity provider ended the sign-in: ${query.error}${query.error_description ? ` (${query.error_description})` : ''}.`);
          }
          if (!query.state || !expected || query.state !== expected) {
            throw new ValidationError('This sign-in response does not belong to a sign-in started in this browser (its state does not match). Start again.');
          }
          const login = await takePendingLogin(query.state);
          if (!login) throw new ValidationError('This sign-in has expired or was already completed. Start again.');
          const person = await completeAuthorization(ctx.search, { state: login.state, nonce: login.nonce, codeVerifier: login.code_verifier });
          // The portal's user record: matched or created, with the provider's copies refreshed.
          await upsertSignedInUser({ subject: person.subject, name: person.name, email: person.email, email_verified: person.emailVerified, roles: person.roles });
          // Signing in again replaces this browser's previous session rather than leaving it behind.
          const previous = ctx.cookies.get(sessionCookie);
          if (previous) await deleteAuthSession(previous);
          const { token, session } = await createAuthSession({
            subject: person.subject, name: person.name, email: person.email, roles: person.roles, id_token: person.idToken, access_token: person.accessToken, refresh_token: person.refreshToken,
          });
          setCookie(ctx, sessionCookie, token, session.expires_at);
          // Sign-ins are rare next to requests: each one also clears ended sessions and abandoned sign-ins.
          await sweepAuthSessions();
          ctx.set('Cache-Control', 'no-store');
          ctx.redirect(login.return_to);
        } catch (err) {
          sendSignInErrorPage(ctx, err);
        }
      },
    })
    .route({
      method: 'post',
      path: '/api/global/auth/logout',
      tags,
      summary: 'Sign out',
      description: `Ends the server-side session and clears its cookie (also when there is none: signing out twice is fine). With a session, the request needs ${csrfHeader}. \`end_session_url\` is the provider's end-session address (RP-initiated logout) to send the browser to, or null when the provider has none.`,
      auth: 'public',
      responses: { 200: { description: 'signed out', schema: signOutResult } },
      errors: { 403: `A session cookie without a valid ${csrfHeader}, or a cross-site request` },
      handler: async (_input, ctx) => {
        const session = await browserSession(ctx);
        if (session) checkCsrf(ctx, session.csrf_token);
        const token = ctx.cookies.get(sessionCookie);
        const signedOut = token ? await deleteAuthSession(token) : false;
        setCookie(ctx, sessionCookie, null);
        return { signed_out: signedOut, end_session_url: session ? await endSessionUrl(session.id_token) : null };
      },
    })
    .route({
      method: 'get',
      path: '/api/global/auth/me',
      tags,
      summary: 'Who is signed in',
      description: `The signed-in person with their roles, and the CSRF token the app sends in ${csrfHeader}. Name, email and roles are re-read from the identity provider at the first request after AUTH_ROLES_REFRESH (default 5 minutes; with the refresh token when the provider issued one, else userinfo with the access token): a role removed at the provider is gone by then, from every route. A person the provider no longer vouches for (refresh or access token refused) is signed out there (401); an unreachable provider leaves the roles as they were until the next check.`,
      auth: 'person',
      responses: { 200: { description: 'the person', schema: me } },
      handler: (_input, ctx) => {
        const s = personOf(ctx)!;
        ctx.set('Cache-Control', 'no-store');
        return {
          subject: s.subject,
          name: s.name,
          email: s.email,
          roles: s.roles,
          csrf_token: s.csrf_token,
          signed_in_at: s.created_at.toISOString(),
          expires_at: s.expires_at.toISOString(),
        };
      },
    });
}
