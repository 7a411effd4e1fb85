/**
 * Roles follow the identity provider: a browser session re-reads its person there every
 * AUTH_ROLES_REFRESH (here 1 second), so a role removed at the provider is gone from the session,
 * from every route and from the user's copies the assistant acts with; a person the provider no
 * longer vouches for is signed out.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startIdentity, signIn, devAccounts } from '../helpers/identity.js';
import type { DevAccount } from '../../shared/identity/dev-provider.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { eventually } from '../helpers/eventually.js';
import { db } from '../../shared/db/index.js';

const accounts: Record<string, DevAccount> = {
  ...devAccounts,
  ops: { login: 'ops', password: 'ops', name: 'Olive Ops', email: 'ops@switchboard.local', roles: ['sre', 'staff'] },
  leaver: { login: 'leaver', password: 'leaver', name: 'Lee Leaver', email: 'leaver@switchboard.local', roles: ['sre'] },
};

let app: Platform;
beforeAll(async () => {
  const idp = await startIdentity({ accounts, env: { AUTH_ROLES_REFRESH: '1 second' } });
  app = await startPlatform({ port: idp.appPort, workers: false });
});

describe('roles re-read from the identity provider', () => {
  it('a role removed at the provider is gone from the session, the routes and the user copies within AUTH_ROLES_REFRESH', async () => {
    const ops = await signIn(app.url, accounts.ops!);
    expect(ops.me.roles).toEqual(['sre', 'staff', 'user']);
    expect((await ops.request('/api/v1/alerts')).status).toBe(200);
    const stored = await db()('auth_sessions').where({ subject: 'ops' }).first();
    expect(stored.refresh_token).toBeTruthy();

    accounts.ops!.roles = [];
    const roles = await eventually(async () => {
      const me = await ops.request('/api/global/auth/me');
      expect(me.status).toBe(200);
      const body = (await me.json()) as { roles: string[] };
      return body.roles.includes('sre') ? null : body.roles;
    }, 10_000, 'the sre role to be gone from /me');
    expect(roles).toEqual(['user']);
    expect((await ops.request('/api/v1/alerts')).status).toBe(403);
    // The same session goes on: signed in still, only with what the provider says now.
    const user = await db()('users').where({ idp_subject: 'ops' }).first();
    expect(user.roles).toEqual(['user']);
    // Re-read with the refresh token: the session holds a new access token.
    expect((await db()('auth_sessions').where({ subject: 'ops' }).first()).access_token).not.toBe(stored.access_token);

    accounts.ops!.roles = ['sre'];
    await eventually(async () => ((await ops.request('/api/v1/alerts')).status === 200 ? true : null), 10_000, 'the sre role back');
  });

  it('a person the provider no longer vouches for (refresh refused) is signed out', async () => {
    const leaver = await signIn(app.url, accounts.leaver!);
    expect((await leaver.request('/api/v1/alerts')).status).toBe(200);
    // The grant is revoked at the provider: what the session holds is no longer accepted there.
    await db()('auth_sessions').where({ subject: 'leaver' }).update({ refresh_token: 'revoked-at-the-provider', access_token: 'revoked-at-the-provider' });
    await eventually(async () => ((await leaver.request('/api/global/auth/me')).status === 401 ? true : null), 10_000, 'the session to end');
    expect(await db()('auth_sessions').where({ subject: 'leaver' }).first()).toBeUndefined();
    expect((await leaver.request('/api/v1/alerts')).status).toBe(401);
  });

  it('a session from before tokens were kept is signed out at its first check (nothing to re-read it with)', async () => {
    const old = await signIn(app.url, accounts.ops!);
    const cookieToken = old.cookie.slice('sb_session='.length);
    const { createHash } = await import('node:crypto');
    const tokenHash = createHash('sha256').update(cookieToken).digest('base64url');
    await db()('auth_sessions').where({ token_hash: tokenHash }).update({ access_token: null, refresh_token: null });
    await eventually(async () => ((await old.request('/api/global/auth/me')).status === 401 ? true : null), 10_000, 'the old session to end');
  });
});
