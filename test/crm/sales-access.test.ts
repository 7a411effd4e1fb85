/**
 * The CRM for people: the `sales` role (and `sre`) works the CRM API with a browser session, changes
 * are recorded under the person's name, other roles are refused, and the live CRM stream tells an
 * open screen about a lead that arrived by webhook.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startIdentity, signIn, type SignedIn } from '../helpers/identity.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { subscribeUrl } from '../helpers/sse.js';
import { db } from '../../shared/db/index.js';
import type { CrmEvent } from '../../shared/crm/events.js';

let app: Platform;
let sales: SignedIn;

beforeAll(async () => {
  const idp = await startIdentity();
  app = await startPlatform({ port: idp.appPort });
  sales = await signIn(app.url, 'sales');
});

describe('the sales role', () => {
  it('the dev account has the sales role; it works leads and is recorded by name', async () => {
    expect(sales.me.roles).toEqual(['sales', 'user']);
    const created = await sales.request('/api/v1/leads', { method: 'POST', json: { first_name: 'Ada', last_name: 'Byron', email: 'ada@analytical.example', company: 'Analytical' } });
    expect(created.status, await created.clone().text()).toBe(201);
    const lead = await created.json();
    expect((await sales.request(`/api/v1/leads/${lead.id}`, { method: 'PATCH', json: { status: 'contacted', title: 'Countess' } })).status).toBe(200);
    const history = await (await sales.request(`/api/v1/leads/${lead.id}/history`)).json();
    expect(history.data.map((h: { field: string; actor: string }) => [h.field, h.actor])).toEqual([['created', 'Casey Sales'], ['status', 'Casey Sales']]);
    expect((await db()('crm_leads').where({ id: lead.id }).first()).title).toBe('Countess');
  });

  it('sales reaches the CRM, not the SRE API; a portal user reaches neither; the SRE reaches both', async () => {
    expect((await sales.request('/api/v1/pipelines/default/summary')).status).toBe(200);
    expect((await sales.request('/api/v1/alerts')).status).toBe(403);
    const user = await signIn(app.url, 'user');
    expect((await user.request('/api/v1/leads')).status).toBe(403);
    expect((await user.request('/api/v1/crm/events')).status).toBe(403);
    const sre = await signIn(app.url, 'sre');
    expect((await sre.request('/api/v1/leads')).status).toBe(200);
  });

  it('the CRM pages need sales or sre: a portal user gets the 403 page, sales gets the app', async () => {
    expect((await sales.browser.fetch(`${app.url}/admin/crm/leads`)).status).not.toBe(403);
    expect((await sales.browser.fetch(`${app.url}/admin/alerts`)).status).toBe(403);
    const user = await signIn(app.url, 'user');
    expect((await user.browser.fetch(`${app.url}/admin/crm/leads`)).status).toBe(403);
  });
});

describe('live CRM events', () => {
  it('a lead posted to the public webhook reaches an open CRM stream; a status move follows', async () => {
    const stream = await subscribeUrl<CrmEvent>(`${app.url}/api/v1/crm/events`, { Cookie: sales.cookie }, (e) => [e.type, e.data]);
    try {
      const posted = await app.request('/api/v1/webhooks/leads', { method: 'POST', auth: false, json: { first_name: 'Live', last_name: 'Lead', email: 'live@lead.example', source: 'website' } });
      expect(posted.status).toBe(201);
      const { lead_id } = await posted.json();
      const created = await stream.next((e) => e.type === 'lead.created', 5_000);
      expect(created.data).toEqual({ ids: [lead_id], by: 'webhook' });
      await sales.request(`/api/v1/leads/${lead_id}`, { method: 'PATCH', json: { status: 'contacted' } });
      const moved = await stream.next((e) => e.type === 'lead.changed', 5_000);
      expect(moved.data).toEqual({ id: lead_id, change: 'status', status: 'contacted', by: 'Casey Sales' });
    } finally {
      stream.close();
    }
    expect((await app.request('/api/v1/crm/events?types=nope')).status).toBe(400);
  });
});
