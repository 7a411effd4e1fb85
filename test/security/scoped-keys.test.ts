/**
 * Scoped credentials: keys are named and scoped, stored only as a SHA-256, listed and revoked without a
 * restart; acting as a portal user needs portal:impersonate; the tool gateway offers and runs only the
 * tools of a key's scopes; a key of API_KEYS keeps full access.
 */
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { db } from '../../shared/db/index.js';
import { createUser } from '../../shared/users/users.store.js';
import { freshPhone } from '../helpers/chatapp.js';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
});

async function newKey(name: string, scopes: string[], asKey?: string) {
  const res = await api.request('/api/v1/keys', { method: 'POST', json: { name, scopes }, headers: asKey ? { 'X-API-Key': asKey } : {} });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: string; key: string; name: string; scopes: string[] };
}
const as = (key: string, path: string, init: RequestInit & { json?: unknown } = {}) => api.request(path, { ...init, headers: { ...(init.headers as object), 'X-API-Key': key } });

describe('scoped API keys', () => {
  it('a new key is shown once and stored only as its SHA-256', async () => {
    const created = await newKey('crm-sync', ['crm']);
    expect(created.key).toMatch(/^sbk_/);
    const row = await db()('api_keys').where({ id: created.id }).first();
    expect(row.key_sha256).toBe(createHash('sha256').update(created.key).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(created.key);
    const listed = await (await api.request('/api/v1/keys')).json();
    expect(listed.items.find((k: { id: string }) => k.id === created.id)).toMatchObject({ name: 'crm-sync', scopes: ['crm'] });
    expect(JSON.stringify(listed)).not.toContain(created.key);
    // Names are never reused.
    expect((await api.request('/api/v1/keys', { method: 'POST', json: { name: 'crm-sync', scopes: ['sre'] } })).status).toBe(409);
  });

  it('a key reaches only the routes of its scopes; another scope is a 403 naming it', async () => {
    const { key } = await newKey('crm-only', ['crm']);
    expect((await as(key, '/api/v1/leads')).status).toBe(200);
    const alerts = await as(key, '/api/v1/alerts');
    expect(alerts.status).toBe(403);
    expect((await alerts.json()).detail).toContain('sre');
    expect((await as(key, '/api/sessions/resolve', { method: 'POST', json: { user_id: '00000000-0000-4000-8000-000000000000' }, headers: { 'Content-Type': 'application/json' } })).status).toBe(403);
    expect((await as(key, '/api/v1/keys')).status).toBe(403);
  });

  it('acting as a portal user with X-User-Id needs portal:impersonate', async () => {
    const user = await createUser({ phone_number: freshPhone() });
    const { key: sessionsKey } = await newKey('channel-svc', ['sessions']);
    const refused = await as(sessionsKey, '/api/portal/profile', { headers: { 'X-User-Id': user.user_id } });
    expect(refused.status).toBe(403);
    expect((await refused.json()).detail).toContain('portal:impersonate');
    const { key: portalKey } = await newKey('portal-bff', ['portal:impersonate']);
    const ok = await as(portalKey, '/api/portal/profile', { headers: { 'X-User-Id': user.user_id } });
    expect(ok.status).toBe(200);
    expect((await ok.json()).user_id).toBe(user.user_id);
  });

  it('a revoked key stops working at once, without a restart', async () => {
    const created = await newKey('short-lived', ['crm']);
    expect((await as(created.key, '/api/v1/leads')).status).toBe(200);
    const revoked = await api.request(`/api/v1/keys/${created.id}`, { method: 'DELETE' });
    expect(revoked.status).toBe(200);
    expect((await revoked.json()).revoked_at).not.toBeNull();
    expect((await as(created.key, '/api/v1/leads')).status).toBe(401);
    const live = await (await api.request('/api/v1/keys')).json();
    expect(live.items.map((k: { id: string }) => k.id)).not.toContain(created.id);
    const all = await (await api.request('/api/v1/keys?include_revoked=true')).json();
    expect(all.items.map((k: { id: string }) => k.id)).toContain(created.id);
  });

  it('a key grants only scopes it holds', async () => {
    const { key } = await newKey('key-admin', ['keys']);
    const res = await as(key, '/api/v1/keys', { method: 'POST', json: { name: 'escalated', scopes: ['crm'] }, headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(403);
  });

  it('a key revokes only keys with no scope it lacks: a keys-scoped key cannot switch off a full-access or a crm key', async () => {
    const { key: keyAdmin, id: keyAdminId } = await newKey('key-revoker', ['keys']);
    const full = await newKey('full-access', ['*']);
    const crm = await newKey('crm-revoke-target', ['crm']);
    const peer = await newKey('keys-peer', ['keys']);
    for (const target of [full, crm]) {
      const refused = await as(keyAdmin, `/api/v1/keys/${target.id}`, { method: 'DELETE' });
      expect(refused.status).toBe(403);
      expect((await refused.json()).detail).toMatch(/only revoke keys whose scopes it holds; this one lacks/);
      expect((await as(target.key, '/api/v1/leads')).status).toBe(200);
      expect((await db()('api_keys').where({ id: target.id }).first()).revoked_at).toBeNull();
    }
    // A key with no more rights than its own (the same scopes; itself) is revoked as before.
    expect((await as(keyAdmin, `/api/v1/keys/${peer.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await as(peer.key, '/api/v1/keys')).status).toBe(401);
    // A full-access key revokes any.
    expect((await as(full.key, `/api/v1/keys/${crm.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await as(keyAdmin, `/api/v1/keys/${keyAdminId}`, { method: 'DELETE' })).status).toBe(200);
    expect((await as(keyAdmin, '/api/v1/keys')).status).toBe(401);
  });

  it('the tool gateway lists and runs only the tools of the key\'s scopes, and audits the key by name', async () => {
    const { key } = await newKey('crm-assistant', ['tools', 'crm']);
    const listed = (await (await as(key, '/api/v1/tools')).json()).tools.map((t: { name: string }) => t.name);
    expect(listed).toContain('crm_list_leads');
    expect(listed.filter((n: string) => !n.startsWith('crm_'))).toEqual([]);
    expect((await as(key, '/api/v1/tools/crm_list_leads/execute', { method: 'POST', json: {}, headers: { 'Content-Type': 'application/json' } })).status).toBe(200);
    const sre = await as(key, '/api/v1/tools/sre_list_alerts/execute', { method: 'POST', json: {}, headers: { 'Content-Type': 'application/json' } });
    expect(sre.status).toBe(403);
    const audit = await (await api.request('/api/v1/tools/calls?caller_id=key:crm-assistant')).json();
    expect(audit.items.map((c: { tool: string; outcome: string }) => [c.tool, c.outcome])).toEqual([['sre_list_alerts', 'forbidden'], ['crm_list_leads', 'ok']]);
    // Without the tools scope, not even the listing.
    const { key: crmOnly } = await newKey('crm-no-tools', ['crm']);
    expect((await as(crmOnly, '/api/v1/tools')).status).toBe(403);
  });

  it('a key of API_KEYS keeps full access, and the API reference lists the scope of each route', async () => {
    expect((await api.request('/api/v1/alerts')).status).toBe(200);
    expect((await api.request('/api/v1/leads')).status).toBe(200);
    const doc = await (await api.request('/api/openapi.json', { auth: false })).json();
    expect(doc.paths['/api/v1/leads'].get.security).toContainEqual({ ApiKey: ['crm'] });
    expect(doc.paths['/api/portal/profile'].get.security).toContainEqual({ ApiKey: ['portal:impersonate'] });
    expect(doc.components.securitySchemes.ApiKey.description).toContain('portal:impersonate');
  });
});
