import { createHmac, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { db } from '../../shared/db/index.js';
import { verifyLeadWebhook } from '../../shared/crm/webhooks.js';

const secret = 'lead-hook-secret';
const whsec = `whsec_${Buffer.from(secret).toString('base64')}`;
process.env.CRM_WEBHOOK_SECRET = secret;

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const send = (path: string, raw: string, headers: Record<string, string>) =>
  api.request(path, { method: 'POST', body: raw, headers: { 'Content-Type': 'application/json', ...headers }, auth: false });
const hmac = (raw: string, key = secret) => `sha256=${createHmac('sha256', key).update(raw).digest('hex')}`;
const count = async (last: string) => Number((await db()('crm_leads').where({ last_name: last }).count<{ count: number }[]>('* as count'))[0]!.count);
/** Standard Webhooks headers signed by the reference library, keyed like the service (secret bytes). */
function standard(raw: string, at = new Date(), id = `msg_${randomUUID()}`) {
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(whsec).sign(id, at, raw) };
}

describe('lead webhook signatures (CRM_WEBHOOK_SECRET set)', () => {
  const paths = ['/api/v1/webhooks/leads', '/api/v1/webhooks/leads/batch'] as const;
  const body = (path: string, last: string) => JSON.stringify(path.endsWith('batch') ? { leads: [{ first_name: 'Sig', last_name: last }] } : { first_name: 'Sig', last_name: last });

  it.each(paths)('%s: a correct X-Webhook-Signature (HMAC-SHA256 of the raw body) is accepted', async (path) => {
    const last = `Hmac${randomUUID().slice(0, 8)}`;
    const raw = body(path, last);
    const res = await send(path, raw, { 'X-Webhook-Signature': hmac(raw) });
    expect(res.status).toBeLessThan(300);
    expect(await count(last)).toBe(1);
  });

  it.each(paths)('%s: absent, wrong or other-body signatures are a 401 and nothing is stored', async (path) => {
    const last = `Bad${randomUUID().slice(0, 8)}`;
    const raw = body(path, last);
    for (const headers of [{} as Record<string, string>, { 'X-Webhook-Signature': hmac(raw, 'other-secret') }, { 'X-Webhook-Signature': hmac(raw + ' ') }, { 'X-Webhook-Signature': 'md5=abc' }]) {
      const res = await send(path, raw, headers);
      expect(res.status).toBe(401);
      expect((await res.json()).title).toBe('Unauthorized');
    }
    expect(await count(last)).toBe(0);
  });

  it('the signature covers the raw bytes: the same JSON re-serialised differently fails', async () => {
    const raw = '{"first_name":"Sig","last_name":"Spacing"}';
    expect((await send('/api/v1/webhooks/leads', '{ "first_name": "Sig", "last_name": "Spacing" }', { 'X-Webhook-Signature': hmac(raw) })).status).toBe(401);
    expect((await send('/api/v1/webhooks/leads', raw, { 'X-Webhook-Signature': hmac(raw).toUpperCase().replace('SHA256', 'sha256') })).status).toBe(201);
  });

  it.each(paths)('%s: valid Standard Webhooks headers are accepted', async (path) => {
    const last = `Std${randomUUID().slice(0, 8)}`;
    const raw = body(path, last);
    const res = await send(path, raw, standard(raw));
    expect(res.status).toBeLessThan(300);
    expect(await count(last)).toBe(1);
  });

  it('Standard Webhooks: a wrong signature, a tampered id or a timestamp older than 5 minutes is a 401', async () => {
    const last = `StdBad${randomUUID().slice(0, 8)}`;
    const raw = body('/api/v1/webhooks/leads', last);
    const good = standard(raw);
    const wrongKey = { ...good, 'webhook-signature': new Webhook(`whsec_${Buffer.from('nope').toString('base64')}`).sign(good['webhook-id'], new Date(Number(good['webhook-timestamp']) * 1000), raw) };
    const otherId = { ...good, 'webhook-id': 'msg_other' };
    const stale = standard(raw, new Date(Date.now() - 6 * 60_000));
    const future = standard(raw, new Date(Date.now() + 6 * 60_000));
    for (const headers of [wrongKey, otherId, stale, future]) {
      const res = await send('/api/v1/webhooks/leads', raw, headers);
      expect(res.status).toBe(401);
    }
    const staleRes = await send('/api/v1/webhooks/leads', raw, stale);
    expect((await staleRes.json()).detail).toMatch(/too old/);
    expect(await count(last)).toBe(0);
  });

  it('Standard Webhooks: the webhook-id is the delivery id (a redelivery is processed once)', async () => {
    const last = `Redeliver${randomUUID().slice(0, 8)}`;
    const raw = body('/api/v1/webhooks/leads/batch', last);
    const headers = standard(raw);
    const a = await (await send('/api/v1/webhooks/leads/batch', raw, headers)).json();
    const b = await (await send('/api/v1/webhooks/leads/batch', raw, headers)).json();
    expect(b).toEqual(a);
    expect(await count(last)).toBe(1);
  });

  it('an unsigned oversize batch is a 401, not a 413 (signatures first)', async () => {
    const raw = JSON.stringify({ leads: Array.from({ length: 1001 }, () => ({ first_name: 'A', last_name: 'B' })) });
    expect((await send('/api/v1/webhooks/leads/batch', raw, {})).status).toBe(401);
    expect((await send('/api/v1/webhooks/leads/batch', raw, { 'X-Webhook-Signature': hmac(raw) })).status).toBe(413);
  });

  it('a whsec_<base64> secret keys both schemes with its decoded bytes; no secret accepts unsigned requests', () => {
    const raw = '{"first_name":"K","last_name":"Ey"}';
    expect(() => verifyLeadWebhook(raw, standard(raw), whsec)).not.toThrow();
    expect(() => verifyLeadWebhook(raw, { 'x-webhook-signature': hmac(raw) }, whsec)).not.toThrow();
    expect(() => verifyLeadWebhook(raw, { 'x-webhook-signature': hmac(raw, whsec) }, whsec)).toThrow(/does not match/);
    expect(() => verifyLeadWebhook(raw, {}, '')).not.toThrow();
  });
});

describe('lead webhook replays', () => {
  it.each(['/api/v1/webhooks/leads', '/api/v1/webhooks/leads/batch'])('%s: a captured X-Webhook-Signature request replayed later is a 409 and writes nothing', async (path) => {
    // A fresh email each time makes the replay, not a duplicate email, the only reason to refuse it.
    const last = `Replay${randomUUID().slice(0, 8)}`;
    const lead = { first_name: 'Re', last_name: last };
    const raw = JSON.stringify(path.endsWith('batch') ? { leads: [lead] } : lead);
    expect((await send(path, raw, { 'X-Webhook-Signature': hmac(raw) })).status).toBeLessThan(300);
    await db()('crm_leads').where({ last_name: last }).delete(); // the attacker replays after the lead was handled
    const replay = await send(path, raw, { 'X-Webhook-Signature': hmac(raw) });
    expect(replay.status).toBe(409);
    expect((await replay.json()).detail).toMatch(/replay/);
    expect(await count(last)).toBe(0);
  });

  it('a repeat with the same delivery id gets the first outcome (idempotency), not a 409', async () => {
    const raw = JSON.stringify({ first_name: 'Id', last_name: `Idem${randomUUID().slice(0, 8)}` });
    const headers = { 'X-Webhook-Signature': hmac(raw), 'Idempotency-Key': randomUUID() };
    const first = await send('/api/v1/webhooks/leads', raw, headers);
    expect(first.status).toBe(201);
    const again = await send('/api/v1/webhooks/leads', raw, headers);
    expect(again.status).toBe(201);
    expect((await again.json()).lead_id).toBe((await first.json()).lead_id);
    // Without the id, or with another one, the same signed body is a replay.
    expect((await send('/api/v1/webhooks/leads', raw, { 'X-Webhook-Signature': hmac(raw), 'Idempotency-Key': randomUUID() })).status).toBe(409);
  });

  it('Standard Webhooks deliveries are protected by their timestamp instead: an old one is a 401', async () => {
    const raw = JSON.stringify({ first_name: 'Sw', last_name: `Std${randomUUID().slice(0, 8)}` });
    const res = await send('/api/v1/webhooks/leads', raw, standard(raw, new Date(Date.now() - 10 * 60_000)));
    expect(res.status).toBe(401);
  });
});
