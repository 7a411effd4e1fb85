/**
 * Sign-in for tests: the embedded identity provider (shared/identity/dev-provider.ts) on a free
 * port, the app configured for it, and a small cookie-keeping HTTP browser that walks the real
 * OpenID Connect flow (app → provider login form → app callback), so a test can act as a person.
 *
 *   const idp = await startIdentity();                 // before startPlatform: sets PUBLIC_URL, OIDC_*
 *   const app = await startPlatform({ port: idp.appPort });
 *   const sre = await signIn(app.url, 'sre');          // { cookie, csrfToken, request() }
 *   await sre.request('/api/v1/alerts/…/acknowledge', { method: 'POST', json: {} });
 */
import { onShutdown } from '../../shared/lifecycle.js';
import { startDevProvider, devAccounts, type DevAccount, type DevProvider } from '../../shared/identity/dev-provider.js';
import { freePort } from './ports.js';

export { devAccounts };
export type AccountName = keyof typeof devAccounts;

export interface Identity {
  provider: DevProvider;
  /** The port the app must listen on (PUBLIC_URL and the registered redirect URI use it). */
  appPort: number;
  publicUrl: string;
}

/**
 * Starts the provider for this test file and points the app's configuration at it (PUBLIC_URL,
 * OIDC_ISSUER_URL, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, and `env`). Call before the platform reads
 * its configuration, i.e. before startPlatform. With `toolResources` the provider also issues tool-server
 * tokens (provider.toolsClient, client credentials).
 */
export async function startIdentity(options: { accounts?: Record<string, DevAccount>; env?: Record<string, string>; toolResources?: string[] } = {}): Promise<Identity> {
  const appPort = await freePort();
  const publicUrl = `http://127.0.0.1:${appPort}`;
  const rolesClaim = options.env?.OIDC_ROLES_CLAIM ?? 'roles';
  const provider = await startDevProvider({
    port: 0,
    redirectUris: [`${publicUrl}/api/global/auth/oidc/callback`],
    postLogoutRedirectUris: [`${publicUrl}/`],
    accounts: options.accounts,
    rolesClaim,
    toolResources: options.toolResources,
  });
  // Closed by the per-file teardown (shutdown), wherever startIdentity was called from.
  onShutdown('identity provider', provider.close);
  Object.assign(process.env, {
    PUBLIC_URL: publicUrl,
    OIDC_ISSUER_URL: provider.issuer,
    OIDC_CLIENT_ID: provider.clientId,
    OIDC_CLIENT_SECRET: provider.clientSecret,
    ...options.env,
  });
  return { provider, appPort, publicUrl };
}

/** A cookie jar per origin and fetch without automatic redirects: enough of a browser for the OIDC flow. */
export class TestBrowser {
  readonly jar = new Map<string, Map<string, string>>();

  cookieHeader(url: string): string {
    return [...(this.jar.get(new URL(url).origin) ?? new Map()).entries()].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  cookie(url: string, name: string): string | undefined {
    return this.jar.get(new URL(url).origin)?.get(name);
  }

  setCookie(url: string, name: string, value: string | undefined): void {
    const origin = new URL(url).origin;
    const cookies = this.jar.get(origin) ?? new Map<string, string>();
    this.jar.set(origin, cookies);
    if (value === undefined) cookies.delete(name);
    else cookies.set(name, value);
  }

  /** One request: cookies sent and stored, redirects returned, not followed. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = this.cookieHeader(url);
    if (cookie) headers.set('Cookie', cookie);
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at).trim();
      const value = pair!.slice(at + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now()));
      this.setCookie(url, name, expired || value === '' ? undefined : value);
    }
    return res;
  }

  /** Follows redirects from `url` until a response is not a redirect or `stop(url)` says so; returns the last response and its URL. */
  async follow(url: string, stop: (next: string) => boolean = () => false, init?: RequestInit): Promise<{ res: Response; url: string }> {
    let current = url;
    let res = await this.fetch(current, init);
    for (let hops = 0; res.status >= 300 && res.status < 400 && hops < 20; hops++) {
      const next = new URL(res.headers.get('location')!, current).href;
      await res.arrayBuffer();
      if (stop(next)) return { res, url: next };
      current = next;
      res = await this.fetch(current);
    }
    return { res, url: current };
  }
}

function account(name: AccountName | DevAccount): DevAccount {
  return typeof name === 'string' ? devAccounts[name] : name;
}

/**
 * Walks the sign-in up to the provider's redirect back to the app: starts at /api/global/auth/login,
 * submits the provider's login form, and returns the callback URL (code and state) without calling it.
 */
export async function signInUntilCallback(appUrl: string, who: AccountName | DevAccount, returnTo = '/', browser = new TestBrowser()): Promise<{ browser: TestBrowser; callbackUrl: string }> {
  const callback = `${appUrl}/api/global/auth/oidc/callback`;
  const isCallback = (u: string) => u.startsWith(callback);
  const login = await browser.follow(`${appUrl}/api/global/auth/login?return_to=${encodeURIComponent(returnTo)}`, isCallback);
  if (isCallback(login.url)) return { browser, callbackUrl: login.url };
  const page = await login.res.text();
  const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
  if (login.res.status !== 200 || !action) throw new Error(`expected the provider's login form at ${login.url}, got ${login.res.status}: ${page.slice(0, 300)}`);
  const { login: user, password } = account(who);
  const submitted = await browser.follow(
    new URL(action.replace(/&amp;/g, '&'), login.url).href,
    isCallback,
    { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ login: user, password }).toString() },
  );
  if (!isCallback(submitted.url)) throw new Error(`sign-in did not come back to the app: ${submitted.res.status} at ${submitted.url}: ${(await submitted.res.text()).slice(0, 300)}`);
  return { browser, callbackUrl: submitted.url };
}

export interface SignedIn {
  browser: TestBrowser;
  /** `sb_session=…`, for a Cookie header. */
  cookie: string;
  csrfToken: string;
  me: { subject: string; name: string; email: string | null; roles: string[] };
  /** fetch against the app as this person: cookie always, X-CSRF-Token on unsafe methods, `json` as the body. */
  request: (path: string, init?: RequestInit & { json?: unknown }) => Promise<Response>;
}

/** Signs `who` in over HTTP the way a browser would; returns the session cookie and the CSRF token. */
export async function signIn(appUrl: string, who: AccountName | DevAccount): Promise<SignedIn> {
  const { browser, callbackUrl } = await signInUntilCallback(appUrl, who);
  const done = await browser.fetch(callbackUrl);
  if (done.status !== 302) throw new Error(`the callback answered ${done.status}: ${(await done.text()).slice(0, 500)}`);
  const session = browser.cookie(appUrl, 'sb_session');
  if (!session) throw new Error('the callback set no sb_session cookie');
  const meRes = await browser.fetch(`${appUrl}/api/global/auth/me`);
  if (meRes.status !== 200) throw new Error(`/me answered ${meRes.status}: ${await meRes.text()}`);
  const me = (await meRes.json()) as SignedIn['me'] & { csrf_token: string };
  const request: SignedIn['request'] = (path, init = {}) => {
    const { json, ...rest } = init;
    const headers = new Headers(rest.headers);
    const method = (rest.method ?? 'GET').toUpperCase();
    if (!['GET', 'HEAD', 'OPTIONS'].includes(method) && !headers.has('X-CSRF-Token')) headers.set('X-CSRF-Token', me.csrf_token);
    if (json !== undefined) headers.set('Content-Type', 'application/json');
    return browser.fetch(appUrl + path, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
  };
  return { browser, cookie: `sb_session=${session}`, csrfToken: me.csrf_token, me, request };
}
