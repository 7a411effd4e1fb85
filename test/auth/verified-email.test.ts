/**
 * Issue 39 point 4: the identity provider's email is stored only when it marks it verified, and a
 * second account claiming an address never makes its owner unmatchable by the channels (which find
 * people by users.email: the email channel, and Slack before explicit links).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startIdentity, signIn } from '../helpers/identity.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { db } from '../../shared/db/index.js';
import { findUserByEmail } from '../../shared/users/users.store.js';

const accounts = {
  owner: { login: 'owner', password: 'owner', name: 'Olive Owner', email: 'olive@example.test', roles: [] },
  // Another provider account that shows Olive's address without the provider vouching for it.
  mallory: { login: 'mallory', password: 'mallory', name: 'Mallory', email: 'OLIVE@example.test', emailVerified: false, roles: ['sre'] },
  // A second provider account whose (verified) address is one a channel user already owns.
  twin: { login: 'twin', password: 'twin', name: 'Twin', email: 'olive@example.test', roles: [] },
  // An unverified address nobody holds: still not stored.
  newcomer: { login: 'newcomer', password: 'newcomer', name: 'Nia New', email: 'nia@example.test', emailVerified: false, roles: [] },
};

let app: Platform;
beforeAll(async () => {
  const idp = await startIdentity({ accounts });
  app = await startPlatform({ port: idp.appPort });
});

const profile = async (who: Awaited<ReturnType<typeof signIn>>) => {
  const res = await who.request('/api/portal/profile');
  expect(res.status).toBe(200);
  return (await res.json()) as { user_id: string; email: string | null };
};

describe('verified identity data', () => {
  it('an unverified email is not stored, on the user nor on the browser session', async () => {
    const nia = await signIn(app.url, accounts.newcomer);
    expect((await profile(nia)).email).toBeNull();
    const me = await (await nia.request('/api/global/auth/me')).json();
    expect(me.email ?? null).toBeNull();
    expect(await findUserByEmail('nia@example.test')).toBeUndefined();
  });

  it('an unverified claim of an owned address leaves the owner matched by the channels', async () => {
    const [owner] = await db()('users').insert({ phone_number: '+14155550142', email: 'olive@example.test', display_name: 'Olive' }).returning(['user_id']);
    const mallory = await signIn(app.url, accounts.mallory);
    const malloryProfile = await profile(mallory);
    expect(malloryProfile.user_id).not.toBe(owner.user_id);
    expect(malloryProfile.email).toBeNull();
    expect((await findUserByEmail('olive@example.test'))?.user_id).toBe(owner.user_id);
  });

  it('a verified claim by a second provider account does not hide the owner either', async () => {
    const olive = await signIn(app.url, accounts.owner);
    const owner = await profile(olive);
    expect(owner.email).toBe('olive@example.test');
    const twin = await signIn(app.url, accounts.twin);
    const twinProfile = await profile(twin);
    expect(twinProfile.user_id).not.toBe(owner.user_id);
    expect(twinProfile.email).toBeNull();
    expect((await findUserByEmail('Olive@Example.test'))?.user_id).toBe(owner.user_id);
    // Signing in again (the provider's copies refreshed) keeps it that way.
    await signIn(app.url, accounts.twin);
    expect((await findUserByEmail('olive@example.test'))?.user_id).toBe(owner.user_id);
  });

  it('an integration cannot give a held address to a second user either (409 naming body.email)', async () => {
    const owner = await findUserByEmail('olive@example.test');
    expect(owner).toBeDefined();
    const created = await app.request('/api/users', { method: 'POST', json: { phone_number: '+14155550177', email: 'Olive@example.test' } });
    expect(created.status).toBe(409);
    expect((await created.json()).errors).toEqual([{ path: 'body.email', message: 'belongs to another user' }]);
    const other = await app.request('/api/users', { method: 'POST', json: { phone_number: '+14155550178' } });
    expect(other.status).toBe(201);
    const { user_id } = await other.json();
    const patched = await app.request(`/api/users/${user_id}`, { method: 'PATCH', json: { email: 'OLIVE@example.test' } });
    expect(patched.status).toBe(409);
    expect((await findUserByEmail('olive@example.test'))?.user_id).toBe(owner!.user_id);
    // The holder itself may send its own address back.
    expect((await app.request(`/api/users/${owner!.user_id}`, { method: 'PATCH', json: { email: 'olive@example.test' } })).status).toBe(200);
  });
});
