/** Sign-in with OpenID Connect against the embedded provider, sessions, roles, CSRF and sign-out. */
import { beforeAll, describe, expect, it } from 'vitest';
import { startIdentity, signIn, signInUntilCallback, TestBrowser, devAccounts } from '../helpers/identity.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { db } from '../../shared/db/index.js';

let app: Platform;

beforeAll(async () => {
  const idp = await startIdentity();
  app = await startPlatform({ port: idp.appPort, workers: false });
});

describe('sign-in', () => {
  it('signs an SRE in end to end; /me shows name, email and roles', async () => {
    const { browser, callbackUrl } = await signInUntilCallback(app.url, 'sre', '/admin/alerts?status=firing');
    expect(new URL(callbackUrl).searchParams.get('code')).toBeTruthy();
    const done = await browser.fetch(callbackUrl);
    expect(done.status).toBe(302);
    expect(done.headers.get('location')).toBe('/admin/alerts?status=firing');
    const setCookie = done.headers.getSetCookie().find((c) => c.startsWith('sb_session='))!;
    expect(setCookie).toMatch(/httponly/i);
    expect(setCookie).toMatch(/samesite=lax/i);
    expect(setCookie).not.toMatch(/secure/i); // PUBLIC_URL is http here
    const me = await browser.fetch(`${app.url}/api/global/auth/me`);
    expect(me.status).toBe(200);
    const body = await me.json();
    expect(body).toMatchObject({ name: devAccounts.sre.name, email: devAccounts.sre.email, roles: ['sre', 'staff', 'user'], subject: 'sre' });
    expect(body.csrf_token).toMatch(/^[\w-]{20,}$/);
  });

  it('documents the sign-in routes and the session scheme in the API reference', async () => {
    const doc = await (await app.request('/api/openapi.json')).json();
    for (const [path, method] of [['/api/global/auth/login', 'get'], ['/api/global/auth/oidc/callback', 'get'], ['/api/global/auth/logout', 'post'], ['/api/global/auth/me', 'get'], ['/api/v1/sre/events', 'get']] as const) {
      expect(doc.paths[path]?.[method], path).toBeDefined();
    }
    expect(doc.paths['/api/global/auth/me'].get.security).toEqual([{ Session: [] }]);
    expect(doc.components.securitySchemes.Session).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'sb_session' });
  });

  it('the API reference says on each route whom it admits', async () => {
    const doc = await (await app.request('/api/openapi.json')).json();
    const admits = (path: string, method: string) => (doc.paths[path][method].description as string).split('\n\n').at(-1);
    expect(admits('/api/v1/alerts', 'get')).toBe('Admits an API key with scope `sre`, or a signed-in person with role `sre`.');
    expect(admits('/api/v1/leads', 'get')).toBe('Admits an API key with scope `crm`, or a signed-in person with role `sales` or `sre`.');
    expect(admits('/api/portal/staff', 'get')).toBe('Admits an API key with scope `portal:impersonate`, or a signed-in person with role `staff`.');
    expect(admits('/api/global/auth/me', 'get')).toBe('Admits any signed-in person (no API key).');
    expect(admits('/api/global/auth/login', 'get')).toBe('Open to anyone.');
  });

  it('signing in again in the same browser replaces the previous session', async () => {
    const first = await signIn(app.url, 'sre');
    const { callbackUrl } = await signInUntilCallback(app.url, 'sre', '/', first.browser);
    expect((await first.browser.fetch(callbackUrl)).status).toBe(302);
    expect(first.browser.cookie(app.url, 'sb_session')).not.toBe(first.cookie.slice('sb_session='.length));
    expect((await fetch(`${app.url}/api/global/auth/me`, { headers: { Cookie: first.cookie } })).status).toBe(401);
    expect((await first.browser.fetch(`${app.url}/api/global/auth/me`)).status).toBe(200);
  });

  it('lets an SRE session use the SRE API', async () => {
    const sre = await signIn(app.url, 'sre');
    const res = await sre.request('/api/v1/alerts');
    expect(res.status).toBe(200);
  });

  it('gives a portal-only account 403 on the SRE API, and roles [user]', async () => {
    const user = await signIn(app.url, 'user');
    expect(user.me.roles).toEqual(['user']);
    const res = await user.request('/api/v1/alerts');
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect((await res.json()).detail).toContain('sre');
  });

  it('answers 401 problem+json without credentials, and with an unknown cookie', async () => {
    const none = await app.request('/api/v1/alerts', { auth: false });
    expect(none.status).toBe(401);
    expect(none.headers.get('content-type')).toContain('application/problem+json');
    const forged = await app.request('/api/v1/alerts', { auth: false, headers: { Cookie: 'sb_session=not-a-session' } });
    expect(forged.status).toBe(401);
    const me = await app.request('/api/global/auth/me', { auth: false });
    expect(me.status).toBe(401);
  });

  it('still accepts API keys, with no CSRF header', async () => {
    const res = await app.request('/api/v1/incidents', { method: 'POST', json: { title: 'by key' } });
    expect(res.status).toBe(201);
    expect((await res.json()).created_by).toBe('api');
  });

  it('refuses a cross-site form POST and an unsafe request without the CSRF header (403)', async () => {
    const sre = await signIn(app.url, 'sre');
    const crossSite = await fetch(`${app.url}/api/v1/incidents`, {
      method: 'POST',
      headers: { Cookie: sre.cookie, Origin: 'https://evil.example', 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'title=pwned',
    });
    expect(crossSite.status).toBe(403);
    expect(crossSite.headers.get('content-type')).toContain('application/problem+json');
    const noHeader = await fetch(`${app.url}/api/v1/incidents`, { method: 'POST', headers: { Cookie: sre.cookie, 'Content-Type': 'application/json' }, body: '{"title":"x"}' });
    expect(noHeader.status).toBe(403);
    const wrongToken = await sre.request('/api/v1/incidents', { method: 'POST', json: { title: 'x' }, headers: { 'X-CSRF-Token': 'wrong' } });
    expect(wrongToken.status).toBe(403);
    const ok = await sre.request('/api/v1/incidents', { method: 'POST', json: { title: 'from the browser' } });
    expect(ok.status).toBe(201);
    expect((await ok.json()).created_by).toBe(devAccounts.sre.name);
  });

  it('fails a tampered state with a clear HTML page (400)', async () => {
    const { browser, callbackUrl } = await signInUntilCallback(app.url, 'sre');
    const url = new URL(callbackUrl);
    url.searchParams.set('state', url.searchParams.get('state')! + 'x');
    const res = await browser.fetch(url.href);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('text/html');
    const page = await res.text();
    expect(page).toContain('Sign-in failed');
    expect(page).toContain('state does not match');
    expect(page).not.toMatch(/at \w+ \(/); // no stack trace
    expect(browser.cookie(app.url, 'sb_session')).toBeUndefined();
  });

  it('fails a replayed callback, and a code replayed into a new sign-in, with the clear page', async () => {
    const { browser, callbackUrl } = await signInUntilCallback(app.url, 'sre');
    expect((await browser.fetch(callbackUrl)).status).toBe(302);
    const again = await browser.fetch(callbackUrl);
    expect(again.status).toBe(400);
    expect(again.headers.get('content-type')).toContain('text/html');
    expect(await again.text()).toContain('Sign-in failed');

    // A fresh sign-in in another browser, its state kept, but the first (used) code swapped in.
    const other = await signInUntilCallback(app.url, 'sre', '/', new TestBrowser());
    const swapped = new URL(other.callbackUrl);
    swapped.searchParams.set('code', new URL(callbackUrl).searchParams.get('code')!);
    const replayed = await other.browser.fetch(swapped.href);
    expect(replayed.status).toBe(400);
    const page = await replayed.text();
    expect(page).toContain('refused the sign-in code');
    expect(other.browser.cookie(app.url, 'sb_session')).toBeUndefined();
  });

  it('refuses a return_to that leaves the site', async () => {
    for (const bad of ['https://evil.example/', '//evil.example/x', '/\\evil.example']) {
      const res = await app.request(`/api/global/auth/login?return_to=${encodeURIComponent(bad)}`, { auth: false, redirect: 'manual' });
      expect(res.status, bad).toBe(400);
      expect((await res.json()).errors[0].path).toBe('query.return_to');
    }
  });

  it('ends a session idle past AUTH_SESSION_IDLE or older than AUTH_SESSION_MAX', async () => {
    const idle = await signIn(app.url, 'sre');
    const old = await signIn(app.url, 'sre');
    expect((await idle.request('/api/v1/alerts')).status).toBe(200);
    await db()('auth_sessions').where({ csrf_token: idle.csrfToken }).update({ last_seen_at: db().raw("now() - interval '8 hours 1 minute'") });
    await db()('auth_sessions').where({ csrf_token: old.csrfToken }).update({ expires_at: db().raw("now() - interval '1 second'") });
    expect((await idle.request('/api/v1/alerts')).status).toBe(401);
    expect((await old.request('/api/global/auth/me')).status).toBe(401);
    expect(await db()('auth_sessions').whereIn('csrf_token', [idle.csrfToken, old.csrfToken]).count('* as n').first()).toEqual({ n: 0 });
  });

  it('logout ends the session: the old cookie gets 401, and the end-session URL is returned', async () => {
    const sre = await signIn(app.url, 'sre');
    const refused = await fetch(`${app.url}/api/global/auth/logout`, { method: 'POST', headers: { Cookie: sre.cookie } });
    expect(refused.status).toBe(403);
    const out = await sre.request('/api/global/auth/logout', { method: 'POST' });
    expect(out.status).toBe(200);
    const body = await out.json();
    expect(body.signed_out).toBe(true);
    expect(body.end_session_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/session\/end\?/);
    expect(new URL(body.end_session_url).searchParams.get('id_token_hint')).toBeTruthy();
    const after = await fetch(`${app.url}/api/v1/alerts`, { headers: { Cookie: sre.cookie } });
    expect(after.status).toBe(401);
  });
});
