/**
 * Day-2 care: rows of the tables that grow with traffic are deleted once past their RETENTION_*
 * period, by a job that a daily tick enqueues once per slot; rows still within it, unfinished
 * discovery runs and tables kept "forever" stay.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { firing } from '../sre/alerting-helpers.js';
import { eventually } from '../helpers/eventually.js';
import { newSession } from '../sessions/helpers.js';

process.env.ALERT_WEBHOOK_TOKEN = 'retention-token';
const { startPlatform } = await import('../helpers/platform.js');
const { db } = await import('../../shared/db/index.js');
const { config } = await import('../../shared/config.js');
const { retentionTargets, pruneExpired } = await import('../../shared/prune-expired.sql.js');
const { enqueue, jobEvents } = await import('../../shared/queues.js');
const { metricsRegistry } = await import('../../shared/metrics.js');
const api = await startPlatform();

const count = async (table: string) => Number(((await db()(table).count({ n: '*' }))[0] as { n: string }).n);

/** One row (or more) in every pruned table, made the way the platform makes them where that is short. */
async function traffic(tag: string): Promise<void> {
  const res = await api.request('/webhooks/alertmanager/default', { method: 'POST', json: firing(`Retention${tag}`), headers: { Authorization: 'Bearer retention-token' }, auth: false });
  expect(res.status).toBeLessThan(300);
  const { sessionId } = await newSession(api);
  await db()('tool_calls').insert({ tool: 'crm_lead_get', executor: 'crm', caller_kind: 'api_key', caller_id: 'test', outcome: 'ok', duration_ms: 1, input_sha256: 'a'.repeat(64) });
  await db()('session_events').insert({ session_id: sessionId, event_type: 'TYPING' });
  await db()('sre_discovery_runs').insert({ trigger: 'manual', status: 'succeeded', finished_at: db().fn.now() });
  await db()('crm_webhook_deliveries').insert({ kind: 'batch', delivery_id: randomUUID(), result: {} });
  await db()('agent_turn_steps').insert({ turn_key: randomUUID(), step_key: 'model', session_id: sessionId, status: 'done', data: {} });
}

describe('retention', () => {
  it('has a documented default for every table that grows with traffic', () => {
    expect(Object.keys(config().retention)).toEqual(['pruneCron', ...retentionTargets.map((t) => t.setting)]);
    expect(config().retention).toMatchObject({ alertPayloads: '30 days', alertHistory: '180 days', toolCalls: '90 days', sessionEvents: '90 days', discoveryRuns: '30 days' });
  });

  it('a prune with a short retention deletes only the rows past it, keeps unfinished runs, and keeps "forever" tables whole', async () => {
    await traffic('Old');
    await eventually(async () => (await count('sre_alert_state_history')) > 0 && (await count('sre_alert_payloads')) > 0, 15_000, 'the alert stored');
    // An unfinished discovery run from long ago: it is still running, so it stays.
    await db()('sre_discovery_runs').insert({ trigger: 'manual', status: 'running' });
    for (const { table, column } of retentionTargets) await db()(table).update({ [column]: db().raw("now() - interval '3 days'") });
    const old = Object.fromEntries(await Promise.all(retentionTargets.map(async ({ table }) => [table, await count(table)] as const)));
    await traffic('New');
    await eventually(async () => (await count('sre_alert_payloads')) > old.sre_alert_payloads!, 15_000, 'the second alert stored');
    const before = Object.fromEntries(await Promise.all(retentionTargets.map(async ({ table }) => [table, await count(table)] as const)));

    const short = { ...config().retention, ...Object.fromEntries(retentionTargets.map((t) => [t.setting, '2 days'])), toolCalls: 'forever' as const };
    const startedAt = Date.now() / 1000;
    const deleted = await pruneExpired(short);

    // The metrics behind SwitchboardRetentionPruneMissing: when the prune last finished, rows deleted per table.
    const metric = async (name: string) => (await metricsRegistry.getSingleMetric(name)!.get()).values;
    const [last] = await metric('switchboard_retention_prune_last_success_timestamp_seconds');
    expect(last!.value).toBeGreaterThanOrEqual(Math.floor(startedAt));
    const rows = await metric('switchboard_retention_pruned_rows_total');
    expect(rows.find((v) => v.labels.table === 'session_events')!.value).toBeGreaterThanOrEqual(deleted.session_events!);

    for (const { table } of retentionTargets) {
      const after = await count(table);
      if (table === 'tool_calls') {
        expect(deleted[table], table).toBeUndefined();
        expect(after, table).toBe(before[table]);
      } else if (table === 'sre_discovery_runs') {
        expect(deleted[table], table).toBe(old[table]! - 1);
        expect(after, table).toBe(before[table]! - old[table]! + 1);
      } else if (table === 'sre_runbook_executions') {
        expect(deleted[table], table).toBe(0);
      } else {
        expect(old[table], `${table} had old rows`).toBeGreaterThan(0);
        expect(deleted[table], table).toBe(old[table]);
        expect(after, table).toBe(before[table]! - old[table]!);
      }
    }
  });

  it('the scheduled prune is a job: ticks of the same day give one job, and it runs on a worker', async () => {
    const slot = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000).toISOString();
    const events = await jobEvents('platform.prune');
    const [a, b] = [await enqueue('platform.prune', { slot }), await enqueue('platform.prune', { slot })];
    expect(a.id).toBe(b.id);
    const result = (await a.waitUntilFinished(events, 15_000)) as Record<string, number>;
    expect(Object.keys(result)).toContain('session_events');
  });
});
