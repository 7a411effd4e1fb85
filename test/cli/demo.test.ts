/**
 * The demo data of `npm run dev -- --demo`, seeded through the platform's API and webhooks against a
 * test platform: every service gets its marked rows, and a second run adds nothing.
 */
import { describe, expect, it } from 'vitest';
import { startPlatform, testApiKey } from '../helpers/platform.js';
import { db } from '../../shared/db/index.js';
import { seedDemo } from '../../shared/cli/demo.js';
import { startDevAutomation } from '../../shared/sre/runbooks/dev-automation.js';
import { QueueWatch } from '../helpers/queues.js';
import { eventually } from '../helpers/eventually.js';
import { onShutdown } from '../../shared/lifecycle.js';

// As npm run dev -- --demo does without AUTOMATION_URL: the stand-in answers the runbooks' workflows.
const automation = await startDevAutomation();
onShutdown('demo automation', automation.close);
process.env.AUTOMATION_URL = automation.url;
const app = await startPlatform();
const tables = [
  'users', 'sessions', 'session_interactions', 'session_messages', 'crm_leads', 'crm_accounts', 'crm_opportunities', 'crm_history',
  'sre_alert_instances', 'sre_alert_sources', 'sre_incidents', 'sre_incident_timeline', 'sre_entities', 'sre_relationships', 'sre_runbooks',
  'sre_runbook_executions', 'portal_cases', 'portal_case_comments', 'documents',
] as const;
const counts = async () => Object.fromEntries(await Promise.all(tables.map(async (t) => [t, Number((await db()(t).count({ n: '*' }).first())!.n)]))) as Record<(typeof tables)[number], number>;

describe('demo data', () => {
  it('fills every service through the API; a second run adds nothing', async () => {
    const started = Date.now();
    const first = await seedDemo({ baseUrl: app.url, apiKey: testApiKey, log: console.log });
    console.log(`demo seeded in ${Date.now() - started} ms`);
    expect(Object.values(first).every((s) => !s.skipped)).toBe(true);
    // Messages and documents are written by the workers: wait for them before counting.
    await eventually(async () => (Number((await db()('session_messages').count({ n: '*' }).first())!.n) >= 16 ? true : undefined), 20_000);
    await eventually(async () => (Number((await db()('documents').whereIn('rag_status', ['indexed', 'failed']).count({ n: '*' }).first())!.n) === 2 ? true : undefined), 30_000);
    expect((await db()('documents').select('rag_status')).map((d) => d.rag_status)).toEqual(['indexed', 'indexed']);
    const after = await counts();
    console.log('demo rows', JSON.stringify(after));
    expect(after).toMatchObject({ users: 4, sessions: 4, session_interactions: 9, session_messages: 18, crm_leads: 9, crm_accounts: 6, crm_opportunities: 10, sre_incidents: expect.any(Number) });
    expect(after.sre_alert_instances).toBeGreaterThanOrEqual(5);
    expect(after.sre_alert_sources).toBeGreaterThanOrEqual(2);
    expect(after.sre_entities).toBe(6);
    expect(after.sre_relationships).toBe(7);
    expect(after.sre_runbooks).toBe(2);
    expect(after.sre_runbook_executions).toBe(2);
    expect(after.portal_cases).toBe(2);
    expect(after.portal_case_comments).toBe(3);
    expect(after.documents).toBe(2);
    const statuses = (await db()('crm_leads').distinct('status')).map((r: { status: string }) => r.status).sort();
    expect(statuses).toEqual(['contacted', 'converted', 'new', 'qualified', 'unqualified']);
    // Every demo row carries the mark, the accounts and opportunities made by converting demo leads included.
    expect((await db()('crm_accounts').pluck('name')).filter((n: string) => !n.includes('(demo)'))).toEqual([]);
    expect((await db()('crm_opportunities').pluck('name')).filter((n: string) => !n.includes('(demo)'))).toEqual([]);
    expect((await db()('crm_leads').pluck('company')).filter((n: string) => !n.includes('(demo)'))).toEqual([]);
    const stages = (await db()('crm_opportunities as o').join('crm_pipeline_stages as s', 's.id', 'o.stage_id').distinct('s.name')).map((r) => r.name).sort();
    expect(stages).toEqual(['Closed Lost', 'Closed Won', 'Discovery', 'Lead', 'Negotiation', 'Proposal']);
    expect(Number((await db()('sre_alert_instances').where({ status: 'resolved' }).count({ n: '*' }).first())!.n)).toBe(2);
    expect(Number((await db()('crm_history').where({ field: 'resubmission' }).count({ n: '*' }).first())!.n)).toBe(1);
    // The executions reached the automation stand-in and ended successful.
    await eventually(async () => (Number((await db()('sre_runbook_executions').where({ status: 'success' }).count({ n: '*' }).first())!.n) === 2 ? true : undefined), 20_000);

    const watch = await QueueWatch.start();
    onShutdown('demo queue watch', () => watch.close());
    const second = await seedDemo({ baseUrl: app.url, apiKey: testApiKey });
    expect(Object.values(second).every((s) => s.skipped && s.created === 0)).toBe(true);
    // Rows the API writes itself are there once it answered; what the workers would write needs a job,
    // and the sentinel proves every job added during the second run has been seen.
    await watch.sentinel();
    expect(watch.added).toEqual([]);
    expect(await counts()).toEqual(after);
  }, 120_000);

  it('refuses production', async () => {
    await expect(seedDemo({ baseUrl: app.url, apiKey: testApiKey, nodeEnv: 'production' })).rejects.toThrow(/production/);
  });
});
