import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { leadTransitions } from '../../shared/crm/leads.js';
import { leadStatuses, type LeadStatus } from '../../shared/crm/crm.schemas.js';
import { db } from '../../shared/db/index.js';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
});

let seq = 0;
async function newLead(fields: Record<string, unknown> = {}) {
  seq += 1;
  const res = await api.request('/api/v1/leads', { method: 'POST', json: { first_name: 'Ada', last_name: `Lovelace${seq}`, email: `ada${seq}@example.org`, ...fields } });
  expect(res.status).toBe(201);
  return res.json();
}
const patch = (id: string, json: unknown, headers: Record<string, string> = {}) => api.request(`/api/v1/leads/${id}`, { method: 'PATCH', json, headers });
const convert = (id: string, json: unknown = {}) => api.request(`/api/v1/leads/${id}/convert`, { method: 'POST', json });

/** A lead brought to `status` through allowed moves only. */
async function leadIn(status: LeadStatus, fields: Record<string, unknown> = {}) {
  const lead = await newLead(fields);
  const path: Record<LeadStatus, LeadStatus[]> = {
    new: [],
    contacted: ['contacted'],
    qualified: ['contacted', 'qualified'],
    unqualified: ['unqualified'],
    converted: ['contacted', 'qualified'],
  };
  for (const s of path[status]) expect((await patch(lead.id, { status: s })).status).toBe(200);
  if (status === 'converted') expect((await convert(lead.id)).status).toBe(201);
  return lead;
}

describe('lead lifecycle', () => {
  it('a new lead starts in status new', async () => {
    const lead = await newLead();
    expect(lead).toMatchObject({ status: 'new', first_name: 'Ada', converted_at: null, custom_data: {} });
  });

  const allowedByUpdate = Object.entries(leadTransitions).flatMap(([from, tos]) => tos.filter((to) => to !== 'converted').map((to) => [from, to] as const));
  it.each(allowedByUpdate)('%s → %s is allowed and recorded with its actor', async (from, to) => {
    const lead = await leadIn(from as LeadStatus);
    const res = await patch(lead.id, { status: to }, { 'X-Actor': 'rep@example.org' });
    expect(res.status).toBe(200);
    expect((await res.json()).status).toBe(to);
    const history = (await (await api.request(`/api/v1/leads/${lead.id}/history`)).json()).data;
    expect(history.at(-1)).toMatchObject({ field: 'status', from, to, actor: 'rep@example.org' });
  });

  const forbidden = leadStatuses.flatMap((from) => (['new', 'contacted', 'qualified', 'unqualified'] as const).filter((to) => to !== from && !leadTransitions[from].includes(to)).map((to) => [from, to] as const));
  it.each(forbidden)('%s → %s is a 409 naming the allowed next states', async (from, to) => {
    const lead = await leadIn(from);
    const res = await patch(lead.id, { status: to });
    expect(res.status).toBe(409);
    const body = await res.json();
    expect(body.allowed_next_states).toEqual(leadTransitions[from]);
    expect(body.current_status).toBe(from);
    expect((await (await api.request(`/api/v1/leads/${lead.id}`)).json()).status).toBe(from);
  });

  it.each(['new', 'qualified'] as const)('converted cannot be set by an update of a %s lead, only by conversion (409)', async (from) => {
    const lead = await leadIn(from);
    const res = await patch(lead.id, { status: 'converted' });
    expect(res.status).toBe(409);
    const body = await res.json();
    expect(body.allowed_next_states).toEqual(leadTransitions[from]);
    if (from === 'qualified') expect(body.detail).toMatch(/only by conversion/);
    expect((await (await api.request(`/api/v1/leads/${lead.id}`)).json()).status).toBe(from);
  });

  it('repeating the current status is a no-op', async () => {
    const lead = await leadIn('contacted');
    expect((await patch(lead.id, { status: 'contacted', notes: 'called twice' })).status).toBe(200);
    const history = (await (await api.request(`/api/v1/leads/${lead.id}/history`)).json()).data;
    expect(history.map((h: { field: string; to: string }) => [h.field, h.to])).toEqual([['created', 'new'], ['status', 'contacted']]);
  });

  it('invalid fields are a 400 naming each; unknown ids a 404', async () => {
    const res = await api.request('/api/v1/leads', { method: 'POST', json: { first_name: 'x'.repeat(101), email: 'not-an-email' } });
    expect(res.status).toBe(400);
    expect((await res.json()).errors.map((e: { path: string }) => e.path).sort()).toEqual(['body.email', 'body.first_name', 'body.last_name']);
    expect((await api.request('/api/v1/leads/3f1c1f9e-8a3b-4e59-9e0e-2b8f5d1c7a10')).status).toBe(404);
  });

  it('a deleted lead is gone (204, then 404)', async () => {
    const lead = await newLead();
    expect((await api.request(`/api/v1/leads/${lead.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api.request(`/api/v1/leads/${lead.id}`)).status).toBe(404);
    expect((await api.request(`/api/v1/leads/${lead.id}`, { method: 'DELETE' })).status).toBe(404);
  });

  it('an email already used by a lead (any case) is a 409 naming the existing lead', async () => {
    const lead = await newLead({ email: 'Grace@Navy.example' });
    const res = await api.request('/api/v1/leads', { method: 'POST', json: { first_name: 'G', last_name: 'H', email: 'grace@navy.EXAMPLE' } });
    expect(res.status).toBe(409);
    expect((await res.json()).existing_lead_id).toBe(lead.id);
  });
});

describe('lead conversion', () => {
  it('without account: an opportunity at the default pipeline\'s first stage with its probability; the lead points to it', async () => {
    const lead = await leadIn('qualified', { company: 'Solo Ltd', estimated_value: '$12,500.50' });
    const res = await convert(lead.id, { opportunity_name: 'Solo deal', close_date: '2027-03-31' });
    expect(res.status).toBe(201);
    const { lead: converted, opportunity, account, account_created } = await res.json();
    const pipelines = (await (await api.request('/api/v1/pipelines')).json()).data;
    const defaultPipeline = pipelines.find((p: { is_default: boolean }) => p.is_default);
    expect(opportunity).toMatchObject({ name: 'Solo deal', stage: 'Lead', probability: 10, amount: 12500.5, close_date: '2027-03-31', account_id: null, pipeline_id: defaultPipeline.id });
    expect(account).toBeNull();
    expect(account_created).toBe(false);
    expect(converted).toMatchObject({ status: 'converted', converted_opportunity_id: opportunity.id, converted_account_id: null });
    expect(converted.converted_at).not.toBeNull();
  });

  it('converting twice is a 409', async () => {
    const lead = await leadIn('converted');
    const res = await convert(lead.id);
    expect(res.status).toBe(409);
    expect((await res.json()).allowed_next_states).toEqual([]);
  });

  it.each(['new', 'contacted', 'unqualified'] as const)('a %s lead cannot be converted (409)', async (status) => {
    const lead = await leadIn(status);
    const res = await convert(lead.id);
    expect(res.status).toBe(409);
    expect((await res.json()).allowed_next_states).toEqual(leadTransitions[status]);
    const opportunities = await db()('crm_opportunities').count<{ count: number }[]>('* as count').whereRaw('name like ?', [`%${lead.last_name}%`]);
    expect(Number(opportunities[0]!.count)).toBe(0);
  });

  it('with create_account: an account from the company name (domain from the work email), linked to both', async () => {
    const lead = await leadIn('qualified', { company: 'Initech', email: 'peter@initech.example' });
    const res = await convert(lead.id, { create_account: true, amount: 5000 });
    const body = await res.json();
    expect(res.status).toBe(201);
    expect(body.account).toMatchObject({ name: 'Initech', domain: 'initech.example' });
    expect(body.account_created).toBe(true);
    expect(body.opportunity.account_id).toBe(body.account.id);
    expect(body.lead.converted_account_id).toBe(body.account.id);
    const detail = await (await api.request(`/api/v1/accounts/${body.account.id}`)).json();
    expect(detail.opportunities.map((o: { id: string }) => o.id)).toEqual([body.opportunity.id]);
  });

  it('an existing account with the same name (any case) is reused, not duplicated', async () => {
    const existing = await (await api.request('/api/v1/accounts', { method: 'POST', json: { name: 'Globex Corporation' } })).json();
    const lead = await leadIn('qualified', { company: 'GLOBEX corporation', email: 'hank@gmail.com' });
    const body = await (await convert(lead.id, { create_account: true })).json();
    expect(body.account.id).toBe(existing.id);
    expect(body.account_created).toBe(false);
    expect(Number((await db()('crm_accounts').whereRaw('lower(name) = ?', ['globex corporation']).count<{ count: number }[]>('* as count'))[0]!.count)).toBe(1);
  });

  it('an existing account with the same domain is reused', async () => {
    const existing = await (await api.request('/api/v1/accounts', { method: 'POST', json: { name: 'Umbrella Corp', domain: 'umbrella.example' } })).json();
    const lead = await leadIn('qualified', { company: 'Umbrella Pharmaceuticals', email: 'alice@umbrella.example' });
    const body = await (await convert(lead.id, { create_account: true })).json();
    expect(body.account.id).toBe(existing.id);
    expect(body.opportunity.account_id).toBe(existing.id);
  });

  it('create_account for a lead without company is a 400 and changes nothing', async () => {
    const lead = await leadIn('qualified');
    const res = await convert(lead.id, { create_account: true });
    expect(res.status).toBe(400);
    expect((await res.json()).errors[0].path).toBe('body.create_account');
    expect((await (await api.request(`/api/v1/leads/${lead.id}`)).json()).status).toBe('qualified');
  });

  it('converts into a given pipeline at its first stage', async () => {
    const pipeline = await (await api.request('/api/v1/pipelines', { method: 'POST', json: { name: 'Partners', stages: [{ name: 'Intro', probability: 5 }, { name: 'Signed', probability: 100 }] } })).json();
    const lead = await leadIn('qualified');
    const body = await (await convert(lead.id, { pipeline_id: pipeline.id })).json();
    expect(body.opportunity).toMatchObject({ pipeline_id: pipeline.id, stage: 'Intro', probability: 5 });
  });
});

describe('conversion under concurrency', () => {
  it('two simultaneous conversions of one lead: one succeeds, the other is a 409; one opportunity exists', async () => {
    const lead = await leadIn('qualified', { company: 'Race Corp', email: 'runner@race.example' });
    const statuses = (await Promise.all([convert(lead.id, { create_account: true }), convert(lead.id, { create_account: true })])).map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409]);
    const rows = await db()('crm_opportunities').where('name', 'like', `%${lead.last_name}%`);
    expect(rows).toHaveLength(1);
  });

  it('simultaneous conversions of two leads of the same company share one account', async () => {
    const a = await leadIn('qualified', { company: 'Twin Peaks Ltd', email: 'dale@twinpeaks.example' });
    const b = await leadIn('qualified', { company: 'twin peaks ltd', email: 'audrey@gmail.com' });
    const [ra, rb] = await Promise.all([convert(a.id, { create_account: true }), convert(b.id, { create_account: true })]);
    const [ca, cb] = [await ra.json(), await rb.json()];
    expect(ca.account.id).toBe(cb.account.id);
    expect(ca.account.name.toLowerCase()).toBe('twin peaks ltd');
    expect([ca.account_created, cb.account_created].sort()).toEqual([false, true]);
  });
});

describe('lead lists', () => {
  it('filters by status, source and text, and pages with a cursor without repeats', async () => {
    for (let i = 0; i < 7; i++) await newLead({ source: 'webinar', company: i % 2 ? 'Wonka Industries' : 'Acme', first_name: `Page${i}` });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const qs = new URLSearchParams({ source: 'WEBINAR', limit: '3', sort: 'first_name', ...(cursor ? { cursor } : {}) });
      const page: { data: Array<{ id: string; first_name: string }>; next_cursor: string | null } = await (await api.request(`/api/v1/leads?${qs}`)).json();
      seen.push(...page.data.map((l) => l.first_name));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(['Page0', 'Page1', 'Page2', 'Page3', 'Page4', 'Page5', 'Page6']);
    const wonka = await (await api.request('/api/v1/leads?q=wonka&status=new')).json();
    expect(wonka.data.map((l: { first_name: string }) => l.first_name).sort()).toEqual(['Page1', 'Page3', 'Page5']);
    const bad = await api.request(`/api/v1/leads?sort=-first_name&cursor=${encodeURIComponent(cursor ?? Buffer.from('{"s":"first_name","k":"x","id":"3f1c1f9e-8a3b-4e59-9e0e-2b8f5d1c7a10"}').toString('base64url'))}`);
    expect(bad.status).toBe(400);
  });
});
