import { createHmac, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { db } from '../../shared/db/index.js';

const secret = 'replay-test-secret';
process.env.CRM_WEBHOOK_SECRET = secret;

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const send = (path: string, raw: string, headers: Record<string, string>) =>
  api.request(path, { method: 'POST', body: raw, headers: { 'Content-Type': 'application/json', ...headers }, auth: false });
const hmac = (raw: string) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
const count = async (last: string) => Number((await db()('crm_leads').where({ last_name: last }).count<{ count: number }[]>('* as count'))[0]!.count);

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
    const at = new Date(Date.now() - 10 * 60_000);
    const id = `msg_${randomUUID()}`;
    const wh = new Webhook(`whsec_${Buffer.from(secret).toString('base64')}`);
    const res = await send('/api/v1/webhooks/leads', raw, { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': wh.sign(id, at, raw) });
    expect(res.status).toBe(401);
  });
});
