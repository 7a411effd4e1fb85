/**
 * The tool gateway: every call audited with its input as a digest, bounded in time and result size,
 * and the workflow executor against a local server speaking n8n's public API (workflows with tags,
 * webhooks, executions).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from '../../shared/zod.js';
import { defineTool, registerTools } from '../../shared/tools.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startPlatform, testApiKey, type Platform } from '../helpers/platform.js';

const automationKey = 'n8n-test-key';
const tag = 'switchboard-tool';

// A local n8n: GET /api/v1/workflows (cursor pages, active and tags filters), webhooks, executions.
const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = [];
const workflows = [
  { id: 'wf1', name: 'Restart Service', active: true, tags: [{ id: 't1', name: tag }], nodes: [{ type: 'n8n-nodes-base.webhook', parameters: { path: 'restart-service', httpMethod: 'POST' }, notes: JSON.stringify({ type: 'object', properties: { service: { type: 'string' } }, required: ['service'] }) }] },
  { id: 'wf2', name: 'Echo back!', active: true, tags: [{ id: 't1', name: tag }, { id: 't2', name: 'ops' }], nodes: [{ type: 'n8n-nodes-base.webhook', parameters: { path: 'echo', httpMethod: 'POST' } }] },
  { id: 'wf3', name: 'Untagged', active: true, tags: [{ id: 't2', name: 'ops' }], nodes: [{ type: 'n8n-nodes-base.webhook', parameters: { path: 'untagged', httpMethod: 'POST' } }] },
  { id: 'wf4', name: 'Inactive', active: false, tags: [{ id: 't1', name: tag }], nodes: [{ type: 'n8n-nodes-base.webhook', parameters: { path: 'inactive', httpMethod: 'POST' } }] },
  { id: 'wf5', name: 'Escaping', active: true, tags: [{ id: 't1', name: tag }], nodes: [{ type: 'n8n-nodes-base.webhook', parameters: { path: '../../steal', httpMethod: 'POST' } }] },
];
const n8n = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
    const url = new URL(req.url!, 'http://n8n');
    const json = (status: number, value: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (url.pathname.startsWith('/api/') && req.headers['x-n8n-api-key'] !== automationKey) return json(401, { message: 'unauthorized' });
    if (req.method === 'GET' && url.pathname === '/api/v1/workflows') {
      const tags = url.searchParams.get('tags')?.split(',') ?? [];
      const active = url.searchParams.get('active');
      const matching = workflows.filter((w) => (active === null || String(w.active) === active) && tags.every((t) => w.tags.some((x) => x.name === t)));
      // Two per page, so the client must follow nextCursor.
      const start = Number(url.searchParams.get('cursor') ?? 0);
      const next = start + 2 < matching.length ? String(start + 2) : null;
      return json(200, { data: matching.slice(start, start + 2), nextCursor: next });
    }
    if (req.method === 'POST' && url.pathname === '/webhook/restart-service') return json(200, [{ executionId: '42' }]);
    if (req.method === 'POST' && url.pathname === '/webhook/echo') return json(200, { echoed: JSON.parse(body) });
    if (req.method === 'GET' && url.pathname === '/api/v1/executions/42') return json(200, { id: 42, finished: true, mode: 'webhook', status: 'success', workflowId: 'wf1' });
    json(404, { message: `no route ${req.method} ${url.pathname}` });
  });
});
await new Promise<void>((r) => n8n.listen(0, '127.0.0.1', r));
process.env.AUTOMATION_URL = `http://127.0.0.1:${(n8n.address() as AddressInfo).port}`;
process.env.AUTOMATION_API_KEY = automationKey;
process.env.TOOL_CALL_TIMEOUT_MS = '400';
process.env.TOOL_RESULT_MAX_BYTES = '2048';
process.env.WORKFLOW_TOOLS_TTL = '2';
afterAll(() => new Promise<void>((r) => n8n.close(() => r())));

registerTools([
  defineTool({ name: 'test_slow', description: 'sleeps', executor: 'test', changesData: false, input: z.object({ ms: z.number() }), handler: ({ ms }) => new Promise((r) => setTimeout(() => r({ slept: ms }), ms)) }),
  defineTool({ name: 'test_big', description: 'a big result', executor: 'test', changesData: false, input: z.object({ bytes: z.number() }), handler: async ({ bytes }) => ({ text: 'x'.repeat(bytes) }) }),
  defineTool({ name: 'test_secret_echo', description: 'echoes', executor: 'test', changesData: false, input: z.object({ secret: z.string() }), handler: async ({ secret }) => ({ length: secret.length }) }),
]);

let api: Platform;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
});

const execute = (name: string, input: unknown) => api.request(`/api/v1/tools/${name}/execute`, { method: 'POST', json: input });
const calls = async (query: string) => (await (await api.request(`/api/v1/tools/calls?${query}`)).json()) as { items: Array<Record<string, any>>; total: number };
const keyId = `key:${createHash('sha256').update(testApiKey).digest('hex').slice(0, 16)}`;

describe('tool gateway audit and limits', () => {
  it('audits each call with who, tool, executor, outcome and duration, keeping only a SHA-256 digest of the input', async () => {
    const input = { secret: 'hunter2-very-private' };
    expect((await execute('test_secret_echo', input)).status).toBe(200);
    const { items } = await calls('tool=test_secret_echo');
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ tool: 'test_secret_echo', executor: 'test', caller_kind: 'api_key', caller_id: keyId, outcome: 'ok', error: null });
    expect(items[0]!.input_sha256).toBe(createHash('sha256').update(JSON.stringify(input)).digest('hex'));
    expect(items[0]!.duration_ms).toBeGreaterThanOrEqual(0);
    // The raw input is nowhere in the stored row.
    const { db } = await import('../../shared/db/index.js');
    const rows = await db()('tool_calls').where({ tool: 'test_secret_echo' });
    expect(JSON.stringify(rows)).not.toContain('hunter2');

    // Bad input and unknown tools are audited too, and filterable by outcome.
    expect((await execute('test_secret_echo', { secret: 5 })).status).toBe(400);
    expect((await execute('test_no_such_tool', {})).status).toBe(404);
    expect((await calls('outcome=invalid_input')).items.map((c) => c.tool)).toEqual(['test_secret_echo']);
    expect((await calls('outcome=unknown_tool')).items.map((c) => c.tool)).toEqual(['test_no_such_tool']);
    expect((await api.request('/api/v1/tools/calls?outcome=bogus')).status).toBe(400);
  });

  it('a call over TOOL_CALL_TIMEOUT_MS is a 504 tool error, audited as timeout', async () => {
    const res = await execute('test_slow', { ms: 2000 });
    expect(res.status).toBe(504);
    expect((await res.json()).detail).toMatch(/did not finish within 400 ms/);
    expect(await (await execute('test_slow', { ms: 10 })).json()).toMatchObject({ result: { slept: 10 } });
    expect((await calls('tool=test_slow')).items.map((c) => c.outcome)).toEqual(['ok', 'timeout']);
  });

  it('a result over TOOL_RESULT_MAX_BYTES is a clear tool error (502 naming the size and the limit)', async () => {
    expect((await execute('test_big', { bytes: 100 })).status).toBe(200);
    const res = await execute('test_big', { bytes: 5000 });
    expect(res.status).toBe(502);
    const problem = await res.json();
    expect(problem).toMatchObject({ limit_bytes: 2048, result_bytes: 5011 });
    expect(problem.detail).toMatch(/TOOL_RESULT_MAX_BYTES/);
    expect((await calls('tool=test_big&outcome=too_large')).items[0]).toMatchObject({ result_bytes: 5011 });
  });

  it('over MCP the same limits are tool errors (isError) the model can read, audited like the gateway routes', async () => {
    const client = new Client({ name: 'limits-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { requestInit: { headers: { 'X-API-Key': testApiKey } } }));
    try {
      const slow = await client.callTool({ name: 'test_slow', arguments: { ms: 2000 } });
      expect(slow.isError).toBe(true);
      expect((slow.content as Array<{ text: string }>)[0]!.text).toMatch(/did not finish within 400 ms/);
      const big = await client.callTool({ name: 'test_big', arguments: { bytes: 5000 } });
      expect(big.isError).toBe(true);
      expect(JSON.parse((big.content as Array<{ text: string }>)[0]!.text)).toMatchObject({ limit_bytes: 2048, result_bytes: 5011 });
    } finally {
      await client.close();
    }
    expect((await calls('tool=test_slow&outcome=timeout')).total).toBe(2);
    expect((await calls('tool=test_big&outcome=too_large')).items.every((c) => c.caller_id === keyId)).toBe(true);
  });
});

describe('workflow executor', () => {
  it('offers the active workflows carrying the tag as tools, from every page of GET /api/v1/workflows', async () => {
    const { tools } = await (await api.request('/api/v1/tools?executor=workflow')).json();
    expect(tools.map((t: { name: string }) => t.name).sort()).toEqual(['workflow_echo_back', 'workflow_restart_service']);
    const restart = tools.find((t: { name: string }) => t.name === 'workflow_restart_service');
    // The schema from the Webhook node's notes is what the listing shows.
    expect(restart.input_schema).toMatchObject({ type: 'object', required: ['service'] });
    const listing = seen.find((r) => r.url.startsWith('/api/v1/workflows'))!;
    expect(new URL(listing.url, 'http://x').searchParams.get('tags')).toBe(tag);
    expect(new URL(listing.url, 'http://x').searchParams.get('active')).toBe('true');
    expect(listing.headers['x-automation-api-key']).toBe(automationKey);
    expect(seen.filter((r) => r.url.startsWith('/api/v1/workflows')).length).toBeGreaterThanOrEqual(2);
  });

  it('calling a workflow tool starts it through its webhook and returns the execution id and status, or its result', async () => {
    const res = await execute('workflow_restart_service', { service: 'billing' });
    expect(res.status, await res.clone().text()).toBe(200);
    expect((await res.json()).result).toEqual({ workflow_id: 'wf1', workflow_name: 'Restart Service', execution_id: '42', status: 'success', result: [{ executionId: '42' }] });
    const hook = seen.find((r) => r.url === '/webhook/restart-service')!;
    expect(JSON.parse(hook.body)).toEqual({ service: 'billing' });
    expect(hook.headers['x-n8n-api-key']).toBe(automationKey);

    const echo = await (await execute('workflow_echo_back', { text: 'hi' })).json();
    expect(echo.result).toMatchObject({ execution_id: null, status: 'success', result: { echoed: { text: 'hi' } } });
    expect(echo.executor).toBe('workflow');
    // The escaping webhook path was never offered, so nothing was sent outside /webhook/.
    expect(seen.some((r) => r.url.includes('steal'))).toBe(false);
    expect((await calls('executor=workflow')).items.map((c) => c.outcome)).toEqual(['ok', 'ok']);
  });

  it('the list is cached for WORKFLOW_TOOLS_TTL and then refreshed from the automation API', async () => {
    const listings = () => seen.filter((r) => r.url.startsWith('/api/v1/workflows')).length;
    await api.request('/api/v1/tools?executor=workflow');
    const before = listings();
    workflows.push({ id: 'wf6', name: 'Scale Up', active: true, tags: [{ id: 't1', name: tag }], nodes: [{ type: 'n8n-nodes-base.webhook', parameters: { path: 'scale-up', httpMethod: 'POST' } }] });
    const cached = await (await api.request('/api/v1/tools?executor=workflow')).json();
    expect(cached.tools.map((t: { name: string }) => t.name)).not.toContain('workflow_scale_up');
    expect(listings()).toBe(before);
    await new Promise((r) => setTimeout(r, 2100));
    const refreshed = await (await api.request('/api/v1/tools?executor=workflow')).json();
    expect(refreshed.tools.map((t: { name: string }) => t.name)).toContain('workflow_scale_up');
    expect(listings()).toBeGreaterThan(before);
  });
});
