/**
 * The identity provider `npm run dev` and the tests embed (npm oidc-provider), so sign-in works on a
 * machine with nothing configured. Three accounts: an SRE (roles sre and staff), a salesperson (role
 * sales: the CRM screens) and a portal user (no special role). Its login page checks the account's password; consent is implied for our one
 * client. Never used in production (config refuses production without OIDC_ISSUER_URL).
 */
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

export interface DevAccount {
  /** What is typed in the login form's Username field. */
  login: string;
  password: string;
  name: string;
  email: string;
  /** The provider's email_verified claim; default true (tests set false for an unverified address). */
  emailVerified?: boolean;
  roles: string[];
}

/** The development accounts (also printed by npm run dev). */
export const devAccounts = {
  sre: { login: 'sre', password: 'sre', name: 'Sam Reliability', email: 'sre@switchboard.local', roles: ['sre', 'staff'] },
  sales: { login: 'sales', password: 'sales', name: 'Casey Sales', email: 'sales@switchboard.local', roles: ['sales'] },
  user: { login: 'user', password: 'user', name: 'Pat Portal', email: 'user@switchboard.local', roles: [] },
} satisfies Record<string, DevAccount>;

export interface DevProviderOptions {
  /** Port to listen on (0: any free one). */
  port: number;
  /** Exact redirect URIs of the client (PUBLIC_URL + /api/global/auth/oidc/callback). */
  redirectUris: string[];
  /** Where the provider may send the browser after sign-out. */
  postLogoutRedirectUris?: string[];
  clientId?: string;
  clientSecret?: string;
  /** Accounts by login; default devAccounts. */
  accounts?: Record<string, DevAccount>;
  /** Claim carrying the roles (OIDC_ROLES_CLAIM); default roles. */
  rolesClaim?: string;
  /**
   * Resource indicators (RFC 8707) of tool servers, e.g. MCP_SERVICE_URL and MCP_SERVICE_URL/mcp: for each,
   * the tools client may obtain a JWT access token (RFC 9068) with that audience and scope mcp through
   * client credentials. None: no tools client.
   */
  toolResources?: string[];
  toolsClientId?: string;
  toolsClientSecret?: string;
}

export interface DevProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The client-credentials client for tool servers (with toolResources). */
  toolsClient?: { clientId: string; clientSecret: string; tokenEndpoint: string };
  close: () => Promise<void>;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function loginPage(uid: string, clientId: string, error?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign in · switchboard dev identity provider</title>
<style>body{font-family:system-ui,sans-serif;max-width:22rem;margin:4rem auto;padding:0 1rem}label{display:block;margin:.75rem 0 .25rem}input{width:100%;padding:.4rem;box-sizing:border-box}button{margin-top:1rem;padding:.5rem 1rem}.error{color:#b00020}</style></head>
<body>
<h1>Sign in</h1>
<p>Development identity provider for <code>${escape(clientId)}</code>.</p>
${error ? `<p class="error" role="alert">${escape(error)}</p>` : ''}
<form method="post" action="/interaction/${escape(uid)}/login" autocomplete="off">
<label for="login">Username</label><input id="login" name="login" required autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" required>
<button type="submit">Sign in</button>
</form>
</body></html>`;
}

async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 16_384) break;
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** Starts the provider on 127.0.0.1:port; resolves once it listens. */
export async function startDevProvider(options: DevProviderOptions): Promise<DevProvider> {
  const accounts = options.accounts ?? devAccounts;
  const rolesClaim = options.rolesClaim ?? 'roles';
  const clientId = options.clientId ?? 'switchboard-dev';
  const clientSecret = options.clientSecret ?? randomBytes(24).toString('base64url');
  const toolResources = new Set(options.toolResources ?? []);
  const toolsClientId = options.toolsClientId ?? 'switchboard-dev-tools';
  const toolsClientSecret = options.toolsClientSecret ?? randomBytes(24).toString('base64url');
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(options.port, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const byLogin = new Map<string, DevAccount>(Object.values(accounts).map((a) => [a.login, a]));

  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        post_logout_redirect_uris: options.postLogoutRedirectUris ?? [],
        response_types: ['code'],
        // Refresh tokens let the platform re-read a person's roles (AUTH_ROLES_REFRESH), as with Keycloak.
        grant_types: ['authorization_code', 'refresh_token'],
      },
      // A machine client without a browser: a coding assistant asking for a token to the tool server.
      ...(toolResources.size
        ? [{ client_id: toolsClientId, client_secret: toolsClientSecret, redirect_uris: [], response_types: [], grant_types: ['client_credentials'] }]
        : []),
    ],
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'dev', use: 'sig', alg: 'RS256' } as never] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    claims: { openid: ['sub', rolesClaim], profile: ['name', 'preferred_username'], email: ['email', 'email_verified'] },
    // Explicit lifetimes (seconds), which also keeps the provider from printing a notice per default.
    ttl: { AccessToken: 3600, ClientCredentials: 3600, AuthorizationCode: 60, IdToken: 3600, Interaction: 600, Session: 7 * 86_400, Grant: 7 * 86_400, RefreshToken: 7 * 86_400 },
    // The sign-in client gets a refresh token without asking for offline_access (which needs a consent prompt here).
    issueRefreshToken: async (_ctx, client) => client.clientId === clientId,
    // Our client always uses PKCE; the dev provider insists, as a careful real one would.
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: true },
      clientCredentials: { enabled: toolResources.size > 0 },
      resourceIndicators: {
        enabled: toolResources.size > 0,
        // Without a resource parameter the tools client still means the tool server (the first one named);
        // the sign-in client keeps its opaque token for userinfo.
        defaultResource: (_ctx, client, oneOf) => oneOf ?? (client.clientId === toolsClientId ? [...toolResources][0] : undefined),
        // Only the named tool servers, only for the tools client: anything else is invalid_target.
        getResourceServerInfo: (_ctx, resource, client) => {
          if (client.clientId !== toolsClientId || !toolResources.has(resource)) throw new errors.InvalidTarget();
          return { scope: 'mcp', audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 3600 };
        },
      },
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, id) => {
      const account = byLogin.get(id);
      if (!account) return undefined;
      return {
        accountId: id,
        claims: () => ({ sub: id, name: account.name, preferred_username: account.login, email: account.email, email_verified: account.emailVerified ?? true, [rolesClaim]: account.roles }),
      };
    },
    // One first-party client: every scope and claim it asks for is granted without a consent page.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const accountId = ctx.oidc.session?.accountId;
      if (!accountId || !ctx.oidc.client) return undefined;
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId });
      grant.addOIDCScope('openid profile email');
      grant.addOIDCClaims(['sub', 'name', 'preferred_username', 'email', 'email_verified', rolesClaim]);
      await grant.save();
      return grant;
    },
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.body = `<!doctype html><title>Identity provider error</title><h1>${escape(String(out.error))}</h1><p>${escape(String(out.error_description ?? ''))}</p>`;
    },
  };
  const provider = new Provider(issuer, configuration);
  // The provider logs expected failures (a replayed code) as unhandled errors; they are answered already.
  provider.on('server_error', () => undefined);

  provider.use(async (ctx, next) => {
    const m = /^\/interaction\/([\w-]+)(\/login)?$/.exec(ctx.path);
    if (!m) return next();
    ctx.set('Cache-Control', 'no-store');
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (ctx.method === 'GET' && !m[2]) {
      ctx.type = 'html';
      ctx.body = loginPage(details.uid, clientId);
      return;
    }
    if (ctx.method === 'POST' && m[2]) {
      const form = await readForm(ctx.req);
      const account = byLogin.get(form.get('login') ?? '');
      if (!account || account.password !== form.get('password')) {
        ctx.status = 401;
        ctx.type = 'html';
        ctx.body = loginPage(details.uid, clientId, 'Unknown username or wrong password.');
        return;
      }
      ctx.respond = false;
      await provider.interactionFinished(ctx.req, ctx.res, { login: { accountId: account.login } }, { mergeWithLastSubmission: false });
      return;
    }
    ctx.status = 405;
  });

  // The sign-in page's tab shows the platform's icon (the repository's file: this provider only runs from source).
  const favicon = path.resolve(import.meta.dirname, '../../api/web/public/favicon.ico');
  provider.use(async (ctx, next) => {
    if (ctx.path !== '/favicon.ico' || ctx.method !== 'GET') return next();
    ctx.type = 'image/x-icon';
    ctx.body = await readFile(favicon);
  });
  server.on('request', provider.callback());
  return {
    issuer,
    clientId,
    clientSecret,
    toolsClient: toolResources.size ? { clientId: toolsClientId, clientSecret: toolsClientSecret, tokenEndpoint: `${issuer}/token` } : undefined,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
