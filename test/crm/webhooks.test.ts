import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { db } from '../../shared/db/index.js';
import { queue } from '../../shared/queues.js';
import { ingestLeadBatch } from '../../shared/crm/webhooks.js';

// No CRM_WEBHOOK_SECRET in this file: unsigned requests are accepted.
process.env.CRM_BATCH_MAX = '5';
process.env.CRM_BATCH_WAIT_MS = '3000';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const post = (path: string, json: unknown, headers: Record<string, string> = {}) => api.request(path, { method: 'POST', json, headers, auth: false });
const leadCount = async (where: Record<string, unknown> = {}) => Number((await db()('crm_leads').where(where).count<{ count: number }[]>('* as count'))[0]!.count);

describe('single lead webhook', () => {
  it('creates a lead with every spec field; the message names it; unsigned is accepted without a secret', async () => {
    const res = await post('/api/v1/webhooks/leads', {
      first_name: 'Marie', last_name: 'Curie', email: 'marie@radium.example', phone: '+33 1 23', company: 'Radium Institute', title: 'Director',
      source: 'website', source_detail: 'contact-form-7', estimated_value: '50000', notes: 'Wants a demo', custom_data: { utm_campaign: 'spring', score: 7 },
    });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(body).toEqual({ success: true, lead_id: expect.stringMatching(/^[0-9a-f-]{36}$/), message: expect.stringContaining('Marie Curie'), outcome: 'created' });
    const lead = await (await api.request(`/api/v1/leads/${body.lead_id}`)).json();
    expect(lead).toMatchObject({ status: 'new', source: 'website', source_detail: 'contact-form-7', estimated_value: '50000', custom_data: { utm_campaign: 'spring', score: 7 }, title: 'Director' });
  });

  it('X-Source overrides the lead\'s source', async () => {
    const body = await (await post('/api/v1/webhooks/leads', { first_name: 'A', last_name: 'B', source: 'website' }, { 'X-Source': 'linkedin' })).json();
    expect((await (await api.request(`/api/v1/leads/${body.lead_id}`)).json()).source).toBe('linkedin');
  });

  it('names over 100 characters, missing names and a non-object custom_data are a 400 naming each field; nothing stored', async () => {
    const before = await leadCount();
    const res = await post('/api/v1/webhooks/leads', { first_name: 'x'.repeat(101), custom_data: 'nope' });
    expect(res.status).toBe(400);
    expect((await res.json()).errors.map((e: { path: string }) => e.path).sort()).toEqual(['body.custom_data', 'body.first_name', 'body.last_name']);
    expect(await leadCount()).toBe(before);
    expect((await post('/api/v1/webhooks/leads', { first_name: 'x'.repeat(100), last_name: 'y'.repeat(100) })).status).toBe(201);
  });

  it('a repeat submission (email in any case) updates the lead: empty fields filled, differing values recorded, answered `updated`', async () => {
    const first = await (await post('/api/v1/webhooks/leads', { first_name: 'Nikola', last_name: 'Tesla', email: 'nikola@tesla.example', company: 'Tesla Electric', custom_data: { a: 1 } })).json();
    const res = await post('/api/v1/webhooks/leads', {
      first_name: 'Nikola', last_name: 'Tesla', email: 'NIKOLA@tesla.example', company: 'Wardenclyffe', phone: '+1 555 0100', source_detail: 'form-9', custom_data: { a: 2, b: 3 },
    }, { 'X-Source': 'linkedin' });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ success: true, lead_id: first.lead_id, outcome: 'updated' });
    const lead = await (await api.request(`/api/v1/leads/${first.lead_id}`)).json();
    expect(lead).toMatchObject({ company: 'Tesla Electric', phone: '+1 555 0100', source: 'linkedin', source_detail: 'form-9', custom_data: { a: 1, b: 3 }, status: 'new' });
    const { data } = await (await api.request(`/api/v1/leads/${first.lead_id}/history`)).json();
    expect(data.map((h: { field: string }) => h.field)).toEqual(['created', 'resubmission']);
    expect(data[0]).toMatchObject({ from: null, to: 'new', actor: 'webhook' });
    expect(data[1]).toMatchObject({ to: 'linkedin', actor: 'webhook' });
    expect(data[1].detail).toEqual({
      source: 'linkedin',
      source_detail: 'form-9',
      status: 'new',
      filled: { phone: '+1 555 0100', source: 'linkedin', source_detail: 'form-9', custom_data: { b: 3 } },
      differing: { company: { current: 'Tesla Electric', submitted: 'Wardenclyffe' }, 'custom_data.a': { current: 1, submitted: 2 } },
    });
    expect(await leadCount({ last_name: 'Tesla' })).toBe(1);
  });

  it('a converted lead is not reopened by a resubmission; the resubmission is recorded', async () => {
    const created = await (await post('/api/v1/webhooks/leads', { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@engine.example', company: 'Engine' })).json();
    for (const status of ['contacted', 'qualified']) await api.request(`/api/v1/leads/${created.lead_id}`, { method: 'PATCH', json: { status } });
    expect((await api.request(`/api/v1/leads/${created.lead_id}/convert`, { method: 'POST', json: {} })).status).toBe(201);
    const again = await (await post('/api/v1/webhooks/leads', { first_name: 'Ada', last_name: 'Lovelace', email: 'Ada@Engine.example', title: 'Countess' })).json();
    expect(again).toMatchObject({ lead_id: created.lead_id, outcome: 'updated' });
    const lead = await (await api.request(`/api/v1/leads/${created.lead_id}`)).json();
    expect(lead.status).toBe('converted');
    const { data } = await (await api.request(`/api/v1/leads/${created.lead_id}/history`)).json();
    expect(data.at(-1)).toMatchObject({ field: 'resubmission', detail: { status: 'converted' } });
  });

  it('a repeated delivery id is processed once and answered with the first outcome', async () => {
    const id = `msg_${randomUUID()}`;
    const a = await (await post('/api/v1/webhooks/leads', { first_name: 'Once', last_name: 'Only' }, { 'Idempotency-Key': id })).json();
    const b = await post('/api/v1/webhooks/leads', { first_name: 'Once', last_name: 'Only' }, { 'Idempotency-Key': id });
    expect(b.status).toBe(201);
    expect((await b.json()).lead_id).toBe(a.lead_id);
    expect(await leadCount({ first_name: 'Once' })).toBe(1);
  });
});

describe('batch lead webhook', () => {
  it('reports partial failure: invalid leads and duplicates in errors, the rest created (through the queue)', async () => {
    await post('/api/v1/webhooks/leads', { first_name: 'Old', last_name: 'Timer', email: 'old@batch.example' });
    const res = await post('/api/v1/webhooks/leads/batch', {
      leads: [
        { first_name: 'Ok', last_name: 'One', email: 'one@batch.example', source: 'webinar' },
        { first_name: '', last_name: 'NoFirst' },
        { first_name: 'Dup', last_name: 'Existing', email: 'OLD@batch.example' },
        { first_name: 'Ok', last_name: 'Two', email: 'two@batch.example' },
        { first_name: 'Dup', last_name: 'InBatch', email: 'Two@Batch.example' },
      ],
    }, { 'X-Source': 'trade_show' });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ success: false, total: 5, created: 2, updated: 1, failed: 2 });
    expect(body.lead_ids).toHaveLength(2);
    expect(body.errors).toEqual([
      { index: 1, field: 'first_name', message: 'is required' },
      { index: 4, field: 'email', message: 'duplicate of the lead at index 3 in this batch' },
    ]);
    const old = (await db()('crm_leads').whereRaw('lower(email) = ?', ['old@batch.example']).first()) as { id: string; source: string; last_name: string };
    expect(body.results).toEqual([
      { index: 0, lead_id: body.lead_ids[0], outcome: 'created' },
      { index: 2, lead_id: old.id, outcome: 'updated' },
      { index: 3, lead_id: body.lead_ids[1], outcome: 'created' },
    ]);
    // The existing lead keeps its name and gains the source it lacked; the differing name is in its history.
    expect(old).toMatchObject({ last_name: 'Timer', source: 'trade_show' });
    const history = (await (await api.request(`/api/v1/leads/${old.id}/history`)).json()).data;
    expect(history.at(-1)).toMatchObject({ field: 'resubmission', to: 'trade_show', detail: { differing: { first_name: { current: 'Old', submitted: 'Dup' }, last_name: { current: 'Timer', submitted: 'Existing' } } } });
    const rows = await db()('crm_leads').whereIn('id', body.lead_ids).orderBy('last_name');
    expect(rows.map((r: { last_name: string; source: string }) => [r.last_name, r.source])).toEqual([['One', 'trade_show'], ['Two', 'trade_show']]);
    expect(await leadCount({ last_name: 'Existing' })).toBe(0);
  });

  it('a lead that is not an object fails alone, named by its index', async () => {
    const body = await (await post('/api/v1/webhooks/leads/batch', { leads: ['oops', { first_name: 'Fine', last_name: 'Lead' }] })).json();
    expect(body).toMatchObject({ success: false, total: 2, created: 1, failed: 1 });
    expect(body.errors).toEqual([{ index: 0, field: 'lead', message: expect.any(String) }]);
  });

  it('a clean batch: success, errors null, ids in input order', async () => {
    const body = await (await post('/api/v1/webhooks/leads/batch', { leads: [{ first_name: 'C1', last_name: 'X' }, { first_name: 'C2', last_name: 'X' }] })).json();
    expect(body).toMatchObject({ success: true, total: 2, created: 2, failed: 0, errors: null });
    const names = await Promise.all(body.lead_ids.map(async (id: string) => (await (await api.request(`/api/v1/leads/${id}`)).json()).first_name));
    expect(names).toEqual(['C1', 'C2']);
  });

  it('more than CRM_BATCH_MAX leads is a 413 and nothing is stored; an empty or missing list is a 400', async () => {
    const before = await leadCount();
    const res = await post('/api/v1/webhooks/leads/batch', { leads: Array.from({ length: 6 }, (_, i) => ({ first_name: `Big${i}`, last_name: 'Batch' })) });
    expect(res.status).toBe(413);
    expect((await res.json()).max_batch_size).toBe(5);
    expect(await leadCount()).toBe(before);
    expect((await post('/api/v1/webhooks/leads/batch', { leads: [] })).status).toBe(400);
    expect((await post('/api/v1/webhooks/leads/batch', { nope: 1 })).status).toBe(400);
  });

  it('a repeated delivery id (webhook-id) is processed once and answered with the first outcome', async () => {
    const headers = { 'Idempotency-Key': `batch-${randomUUID()}` };
    const leads = [{ first_name: 'Rep', last_name: 'Eat', email: 'repeat@batch.example' }];
    const a = await (await post('/api/v1/webhooks/leads/batch', { leads }, headers)).json();
    const b = await (await post('/api/v1/webhooks/leads/batch', { leads }, headers)).json();
    expect(a).toMatchObject({ created: 1, failed: 0 });
    expect(b).toEqual(a);
    expect(await leadCount({ email: 'repeat@batch.example' })).toBe(1);
  });

  it('the same delivery run twice at once (a retried job racing its first attempt) writes once', async () => {
    const job = { delivery_id: `race-${randomUUID()}`, source: null, leads: [{ first_name: 'Race', last_name: 'Twice', email: 'race@twice.example' }] };
    const [a, b] = await Promise.all([ingestLeadBatch(job), ingestLeadBatch(job)]);
    expect(b).toEqual(a);
    expect(a.created).toBe(1);
    expect(await leadCount({ last_name: 'Twice' })).toBe(1);
  });

  it('simultaneous single-lead deliveries with one id create one lead', async () => {
    const headers = { 'Idempotency-Key': `single-${randomUUID()}` };
    const [a, b] = await Promise.all([0, 1].map(async () => (await post('/api/v1/webhooks/leads', { first_name: 'Sim', last_name: 'Ultaneous' }, headers)).json()));
    expect(b.lead_id).toBe(a.lead_id);
    expect(await leadCount({ last_name: 'Ultaneous' })).toBe(1);
  });

  it('past the wait bound the batch is answered 202 and written later; repeating its delivery id returns the outcome', async () => {
    const crm = queue('crm');
    await crm.pause(); // the worker takes nothing: the batch cannot finish within the bound
    const leads = [{ first_name: 'Late', last_name: 'Comer' }];
    const res = await post('/api/v1/webhooks/leads/batch', { leads });
    expect(res.status).toBe(202);
    const accepted = await res.json();
    expect(accepted).toMatchObject({ success: true, total: 1, created: 0, processing: true, delivery_id: expect.any(String) });
    expect(await leadCount({ first_name: 'Late' })).toBe(0);
    await crm.resume();
    const again = await post('/api/v1/webhooks/leads/batch', { leads }, { 'Idempotency-Key': accepted.delivery_id });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ created: 1, total: 1, failed: 0 });
    expect(await leadCount({ first_name: 'Late' })).toBe(1);
  });
});
