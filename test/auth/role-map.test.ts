/** Roles from a provider's groups claim, renamed by OIDC_ROLE_MAP; pages guarded by session and role. */
import { beforeAll, describe, expect, it } from 'vitest';
import Koa from 'koa';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startIdentity, signIn } from '../helpers/identity.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { rolesFromClaims } from '../../shared/auth/roles.js';
import { pageGuard } from '../../api/auth/page-guard.js';
import { personOf } from '../../api/auth/browser-session.js';
import { onShutdown } from '../../shared/lifecycle.js';

const accounts = {
  ops: { login: 'olga', password: 'pw-olga', name: 'Olga Ops', email: 'olga@example.org', roles: ['ops-team', 'everyone'] },
  support: { login: 'sven', password: 'pw-sven', name: 'Sven Support', email: 'sven@example.org', roles: ['support'] },
  plain: { login: 'paula', password: 'pw-paula', name: 'Paula', email: 'paula@example.org', roles: ['sre-wannabe'] },
};

let app: Platform;
beforeAll(async () => {
  const idp = await startIdentity({ accounts, env: { OIDC_ROLES_CLAIM: 'groups', OIDC_ROLE_MAP: 'ops-team:sre, support:staff' } });
  app = await startPlatform({ port: idp.appPort, workers: false });
});

describe('role mapping', () => {
  it('maps provider groups through OIDC_ROLE_MAP, read from the OIDC_ROLES_CLAIM claim', async () => {
    const ops = await signIn(app.url, accounts.ops);
    expect(ops.me.roles).toEqual(['sre', 'user']);
    expect((await ops.request('/api/v1/alerts')).status).toBe(200);
    const support = await signIn(app.url, accounts.support);
    expect(support.me.roles).toEqual(['staff', 'user']);
    expect((await support.request('/api/v1/alerts')).status).toBe(403);
    const plain = await signIn(app.url, accounts.plain);
    expect(plain.me.roles).toEqual(['user']);
  });

  it('reads arrays and space/comma strings; sre and staff need no mapping', () => {
    expect(rolesFromClaims({ roles: ['sre'] }, 'roles', {})).toEqual(['sre', 'user']);
    expect(rolesFromClaims({ roles: 'staff other' }, 'roles', {})).toEqual(['staff', 'user']);
    expect(rolesFromClaims({ groups: 'a,ops' }, 'groups', { ops: 'sre' })).toEqual(['sre', 'user']);
    expect(rolesFromClaims({}, 'roles', { ops: 'sre' })).toEqual(['user']);
    expect(rolesFromClaims({ roles: ['SRE', 'admin'] }, 'roles', {})).toEqual(['user']);
  });
});

describe('page guard', () => {
  let pages: string;
  beforeAll(async () => {
    const koa = new Koa();
    koa.use(pageGuard());
    koa.use((ctx) => {
      ctx.body = `page ${ctx.path} for ${personOf(ctx)?.name ?? 'nobody'}`;
    });
    const server = http.createServer(koa.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onShutdown('pages', () => new Promise((r) => server.close(() => r(undefined))));
    pages = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  it('sends a visitor without a session to sign-in, returning to the page', async () => {
    const res = await fetch(`${pages}/admin/alerts?status=firing`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`/api/global/auth/login?return_to=${encodeURIComponent('/admin/alerts?status=firing')}`);
    expect((await fetch(`${pages}/portal`, { redirect: 'manual' })).status).toBe(302);
  });

  it('answers /admin without sre with a 403 page, lets portal pages through, leaves other paths alone', async () => {
    const support = await signIn(app.url, accounts.support);
    const admin = await fetch(`${pages}/admin`, { headers: { Cookie: support.cookie }, redirect: 'manual' });
    expect(admin.status).toBe(403);
    expect(admin.headers.get('content-type')).toContain('text/html');
    expect(await admin.text()).toContain('needs the sre role');
    const portal = await fetch(`${pages}/portal/cases`, { headers: { Cookie: support.cookie } });
    expect(await portal.text()).toBe('page /portal/cases for Sven Support');
    expect(await (await fetch(`${pages}/admin/queues`)).text()).toBe('page /admin/queues for nobody');
    expect(await (await fetch(`${pages}/assets/app.js`)).text()).toBe('page /assets/app.js for nobody');
    const ops = await signIn(app.url, accounts.ops);
    expect(await (await fetch(`${pages}/admin/cmdb`, { headers: { Cookie: ops.cookie } })).text()).toBe('page /admin/cmdb for Olga Ops');
  });
});
