/**
 * A platform that can see itself: with OTLP configured, one session message makes one trace from
 * the web process's request through its enqueue to the worker process's run, its SQL and its
 * publish, received here over OTLP/HTTP; each request is logged once at info with its route
 * template, status, duration and request id, and the worker's log lines of the job carry that id.
 * Web and worker run as processes of their own, started as the image starts them (their entry files, no Node flag).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformAt, type Platform } from '../helpers/platform.js';
import { startRole, stopRole, type Role } from '../helpers/roles.js';
import { startLocalOtlp, type ReceivedSpan } from '../helpers/local-otlp-server.js';
import { eventually } from '../helpers/eventually.js';
import { newInteraction, newSession } from '../sessions/helpers.js';

const otlp = await startLocalOtlp();
let web: Role;
let worker: Role;
let api: Platform;

const tracing = {
  OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_BSP_SCHEDULE_DELAY: '100',
};

beforeAll(async () => {
  [web, worker] = await Promise.all([
    startRole('api/main.ts', 'trace-web', /API listening/, tracing),
    startRole('workers/main.ts', 'trace-worker', /workers running/, { ...tracing, LOG_LEVEL: 'debug' }),
  ]);
  api = platformAt(/"url":"([^"]+)"/.exec(web.line)![1]!);
}, 120_000);
afterAll(async () => {
  await Promise.all([web, worker].filter(Boolean).map((r) => stopRole(r)));
  await otlp.close();
});

const logLines = (role: Role) => role.lines.flatMap((l) => (l.startsWith('{') ? [JSON.parse(l) as Record<string, unknown>] : []));

describe('access log and one trace across processes', () => {
  it('a session message: one access line, its request id in the worker, and one trace web → enqueue → worker → SQL → publish', async () => {
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const requestId = `trace-${randomUUID()}`;
    const res = await api.request(`/api/sessions/${sessionId}/messages`, {
      method: 'POST',
      headers: { 'X-Request-Id': requestId },
      json: { channel: 'chat', role: 'user', content: 'traced', interaction_id: chat },
    });
    expect(res.status).toBeLessThan(300);
    expect(res.headers.get('x-request-id')).toBe(requestId);

    // The access log: one line at info (30) with the route template, not the path.
    await eventually(() => logLines(web).some((l) => l.request_id === requestId && l.msg === 'request'), 10_000, 'the access log line');
    const access = logLines(web).filter((l) => l.request_id === requestId && l.msg === 'request');
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ level: 30, method: 'POST', route: '/api/sessions/:session_id/messages', status: res.status });
    expect(access[0]!.duration_ms).toEqual(expect.any(Number));
    // The worker's lines about the job name the request that enqueued it.
    await eventually(() => logLines(worker).some((l) => l.request_id === requestId && l.msg === 'job done' && l.job === 'stream.deliver'), 15_000, 'the worker naming the request');

    // The trace: the web process's server span of the request, and everything of its trace id.
    const isRequest = (s: ReceivedSpan) => s.service === 'switchboard-web' && s.kind === 2 && JSON.stringify(s.attributes).includes(`/api/sessions/${sessionId}/messages`);
    const root = await eventually(() => otlp.spans.find(isRequest), 15_000, 'the server span of the request');
    const inTrace = () => otlp.spans.filter((s) => s.traceId === root.traceId);
    const has = (service: string, test: (s: ReceivedSpan) => boolean) => inTrace().some((s) => s.service === service && test(s));
    const isSql = (s: ReceivedSpan) => s.attributes['db.system'] === 'postgresql' || s.attributes['db.system.name'] === 'postgresql';
    const isPublish = (s: ReceivedSpan) => (s.attributes['db.system'] === 'redis' || s.attributes['db.system.name'] === 'redis') && /^publish/i.test(s.name);
    const complete = () => has('switchboard-web', (s) => s.kind === 4) && has('switchboard-worker', (s) => s.kind === 5) && has('switchboard-worker', isSql) && has('switchboard-worker', isPublish);
    await eventually(complete, 20_000, 'one trace with the enqueue, the job\'s run, its SQL and its publish').catch(() => undefined);
    expect(complete(), `spans of the trace: ${inTrace().map((s) => `${s.service}:${s.kind}:${s.name}`).join(', ')}`).toBe(true);
    console.log(`trace ${root.traceId}: ${inTrace().map((s) => `${s.service.replace('switchboard-', '')}:${s.name}`).join(' | ')}`);
    // The worker's run is a child of the web's enqueue: the trace crosses the processes through Redis.
    const spans = inTrace();
    const producer = spans.filter((s) => s.service === 'switchboard-web' && s.kind === 4);
    const consumer = spans.find((s) => s.service === 'switchboard-worker' && s.kind === 5)!;
    const ancestors = (s: ReceivedSpan): ReceivedSpan[] => {
      const parent = spans.find((p) => p.spanId === s.parentSpanId);
      return parent ? [parent, ...ancestors(parent)] : [];
    };
    expect(ancestors(consumer).map((s) => s.spanId)).toEqual(expect.arrayContaining([producer[0]!.spanId, root.spanId]));
    const sql = spans.find((s) => s.service === 'switchboard-worker' && isSql(s))!;
    expect(ancestors(sql).map((s) => s.spanId)).toContain(consumer.spanId);
  }, 90_000);
});
