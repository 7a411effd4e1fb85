import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startPlatform, testApiKey, type Platform } from '../helpers/platform.js';
import { db } from '../../shared/db/index.js';

const specTools = [
  'crm_list_leads', 'crm_get_lead', 'crm_create_lead', 'crm_update_lead', 'crm_convert_lead',
  'crm_list_accounts', 'crm_get_account', 'crm_create_account', 'crm_update_account',
  'crm_list_opportunities', 'crm_get_opportunity', 'crm_create_opportunity', 'crm_update_opportunity',
  'crm_get_pipeline', 'crm_get_pipeline_summary',
];

let api: Platform;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
});

const execute = (name: string, input: unknown) => api.request(`/api/v1/tools/${name}/execute`, { method: 'POST', json: input });
async function run(name: string, input: unknown) {
  const res = await execute(name, input);
  expect(res.status, `${name}: ${await res.clone().text()}`).toBe(200);
  return (await res.json()).result;
}

describe('tool gateway', () => {
  it('lists exactly the spec\'s 15 crm tools under executor crm, with JSON Schemas of their inputs', async () => {
    const { tools } = await (await api.request('/api/v1/tools?executor=crm')).json();
    expect(tools.map((t: { name: string }) => t.name).sort()).toEqual([...specTools].sort());
    const byName = Object.fromEntries(tools.map((t: { name: string }) => [t.name, t]));
    expect(byName.crm_create_lead.input_schema).toMatchObject({ type: 'object', required: ['first_name', 'last_name'] });
    expect(Object.keys(byName.crm_create_lead.input_schema.properties).sort()).toEqual(
      ['company', 'email', 'estimated_value', 'first_name', 'last_name', 'notes', 'phone', 'source', 'title'],
    );
    expect(Object.keys(byName.crm_convert_lead.input_schema.properties).sort()).toEqual(['amount', 'close_date', 'create_account', 'lead_id', 'opportunity_name']);
    expect(byName.crm_update_lead.input_schema.properties.status.enum).toEqual(['new', 'contacted', 'qualified', 'unqualified']);
    expect(Object.keys(byName.crm_create_opportunity.input_schema.properties).sort()).toEqual(['account_id', 'amount', 'close_date', 'name', 'probability', 'stage']);
    expect(Object.keys(byName.crm_update_opportunity.input_schema.properties).sort()).toEqual(['account_id', 'amount', 'close_date', 'name', 'opportunity_id', 'pipeline_id', 'probability', 'stage']);
    expect(byName.crm_get_pipeline_summary.input_schema.properties).toEqual({});
  });

  it('an agent works a lead from creation to a forecast through the tools', async () => {
    const lead = await run('crm_create_lead', { first_name: 'Tool', last_name: 'User', email: 'tool.user@hooli.example', company: 'Hooli', estimated_value: '8000' });
    expect(lead.status).toBe('new');
    await run('crm_update_lead', { lead_id: lead.id, status: 'contacted' });
    await run('crm_update_lead', { lead_id: lead.id, status: 'qualified', notes: 'budget ok' });
    const listed = await run('crm_list_leads', { status: 'qualified' });
    expect(listed.leads.map((l: { id: string }) => l.id)).toContain(lead.id);
    const conversion = await run('crm_convert_lead', { lead_id: lead.id, opportunity_name: 'Hooli platform', amount: 8000, close_date: '2027-01-15', create_account: true });
    expect(conversion.account).toMatchObject({ name: 'Hooli', domain: 'hooli.example' });
    const account = await run('crm_get_account', { account_id: conversion.account.id });
    expect(account.opportunities[0]).toMatchObject({ name: 'Hooli platform', stage: 'Lead', probability: 10 });
    const moved = await run('crm_update_opportunity', { opportunity_id: conversion.opportunity.id, stage: 'Proposal', amount: 9000 });
    expect(moved).toMatchObject({ stage: 'Proposal', probability: 50, amount: 9000 });
    expect((await run('crm_list_opportunities', { account_id: account.id, stage: 'Proposal' })).opportunities).toHaveLength(1);
    const summary = await run('crm_get_pipeline_summary', {});
    expect(summary.stages.Proposal).toMatchObject({ count: 1, value: 9000, weighted_value: 4500, probability: 50 });
    expect((await run('crm_get_pipeline', {})).stages).toHaveLength(6);
    const created = await run('crm_create_account', { name: 'Pied Piper', segment: 'SMB' });
    expect((await run('crm_update_account', { account_id: created.id, industry: 'Compression' })).industry).toBe('Compression');
    expect((await run('crm_list_accounts', { search: 'pied' })).accounts.map((a: { id: string }) => a.id)).toEqual([created.id]);
    const opp = await run('crm_create_opportunity', { name: 'Middle-out', account_id: created.id, stage: 'Discovery', amount: 100 });
    expect(await run('crm_get_opportunity', { opportunity_id: opp.id })).toMatchObject({ stage: 'Discovery', probability: 25 });
    expect((await run('crm_get_lead', { lead_id: lead.id })).status).toBe('converted');
  });

  it('crm_list_* tools page: has_more with next_cursor, and the cursor back reaches older records without repeats', async () => {
    for (let i = 0; i < 5; i++) await run('crm_create_account', { name: `Paged ${i}` });
    for (let i = 0; i < 5; i++) await run('crm_create_lead', { first_name: `Paged${i}`, last_name: 'Lead' });
    for (const [tool, key, filter] of [['crm_list_accounts', 'accounts', { search: 'paged' }], ['crm_list_leads', 'leads', { status: 'new' }]] as const) {
      const seen: string[] = [];
      let cursor: string | undefined;
      let calls = 0;
      do {
        const page = await run(tool, { ...filter, limit: 2, ...(cursor ? { cursor } : {}) });
        calls++;
        expect(page[key].length).toBeLessThanOrEqual(2);
        expect(page.has_more).toBe(page.next_cursor !== null);
        seen.push(...page[key].map((r: { id: string }) => r.id));
        cursor = page.next_cursor ?? undefined;
      } while (cursor && calls < 10);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.length).toBeGreaterThanOrEqual(5);
      expect(calls).toBeGreaterThanOrEqual(3);
    }
    const bad = await execute('crm_list_leads', { cursor: 'not-a-cursor' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).errors).toEqual([{ path: 'input.cursor', message: expect.any(String) }]);
  });

  it('the update and list tools take what their REST routes take: every lead field, the filters, sort and cursor', async () => {
    const doc = await (await api.request('/api/openapi.json')).json();
    const { tools } = await (await api.request('/api/v1/tools?executor=crm')).json();
    const inputOf = (name: string) => Object.keys(tools.find((t: { name: string }) => t.name === name).input_schema.properties).sort();
    const bodyOf = (ref: string) => Object.keys(doc.components.schemas[ref].properties);
    const queryOf = (path: string) => doc.paths[path].get.parameters.map((p: { name: string }) => (p.name === 'q' ? 'search' : p.name));
    expect(inputOf('crm_update_lead')).toEqual([...bodyOf('LeadUpdate'), 'lead_id'].sort());
    expect(inputOf('crm_update_account')).toEqual([...bodyOf('AccountUpdate'), 'account_id'].sort());
    expect(inputOf('crm_update_opportunity')).toEqual([...bodyOf('OpportunityUpdate'), 'opportunity_id'].sort());
    expect(inputOf('crm_list_leads')).toEqual([...queryOf('/api/v1/leads')].sort());
    expect(inputOf('crm_list_accounts')).toEqual([...queryOf('/api/v1/accounts')].sort());
    expect(inputOf('crm_list_opportunities')).toEqual([...queryOf('/api/v1/opportunities')].sort());

    const lead = await run('crm_create_lead', { first_name: 'Every', last_name: 'Field' });
    const changes = {
      first_name: 'Evelyn', last_name: 'Fields', email: 'evelyn@fields.example', phone: '+44 20 7946 0000', company: 'Fields Ltd', title: 'CTO',
      source: 'trade_show', source_detail: 'booth 12', estimated_value: '15000', notes: 'met at the fair', custom_data: { badge: 'A-17' },
    };
    expect(await run('crm_update_lead', { lead_id: lead.id, ...changes, status: 'contacted' })).toMatchObject({ ...changes, status: 'contacted' });
    const row = await db()('crm_leads').where({ id: lead.id }).first();
    expect(row).toMatchObject({ ...changes, status: 'contacted' });

    for (let i = 0; i < 3; i++) await run('crm_create_lead', { first_name: `Fair${i}`, last_name: 'Visitor', source: 'trade_show', company: `Booth ${i}` });
    const bySource = await run('crm_list_leads', { source: 'TRADE_SHOW', search: 'visitor', sort: 'first_name', limit: 2 });
    expect(bySource.leads.map((l: { first_name: string }) => l.first_name)).toEqual(['Fair0', 'Fair1']);
    const next = await run('crm_list_leads', { source: 'trade_show', search: 'visitor', sort: 'first_name', limit: 2, cursor: bySource.next_cursor });
    expect(next.leads.map((l: { first_name: string }) => l.first_name)).toEqual(['Fair2']);
    expect(next.has_more).toBe(false);

    await run('crm_create_account', { name: 'Zeta Bank', segment: 'Enterprise', industry: 'Banking' });
    await run('crm_create_account', { name: 'Alpha Bank', segment: 'Enterprise', industry: 'banking' });
    await run('crm_create_account', { name: 'Beta Shop', segment: 'SMB', industry: 'Retail' });
    const banks = await run('crm_list_accounts', { segment: 'Enterprise', industry: 'BANKING' });
    expect(banks.accounts.map((a: { name: string }) => a.name)).toEqual(['Alpha Bank', 'Zeta Bank']);
    expect((await run('crm_list_accounts', { segment: 'Enterprise', industry: 'banking', sort: '-name' })).accounts[0].name).toBe('Zeta Bank');

    await run('crm_create_opportunity', { name: 'Vault upgrade small', amount: 10 });
    await run('crm_create_opportunity', { name: 'Vault upgrade large', amount: 1000 });
    const vaults = await run('crm_list_opportunities', { search: 'vault', sort: '-amount' });
    expect(vaults.opportunities.map((o: { name: string }) => o.name)).toEqual(['Vault upgrade large', 'Vault upgrade small']);
    expect((await execute('crm_list_leads', { sort: 'email' })).status).toBe(400);
  });

  it('bad input is a tool error naming each field; an unknown tool is a 404; domain refusals keep their status', async () => {
    const bad = await execute('crm_create_lead', { last_name: 5 });
    expect(bad.status).toBe(400);
    expect((await bad.json()).errors.map((e: { path: string }) => e.path).sort()).toEqual(['input.first_name', 'input.last_name']);
    const stage = await execute('crm_create_opportunity', { name: 'X', stage: 'Nowhere' });
    expect(stage.status).toBe(400);
    expect((await stage.json()).errors[0].path).toBe('input.stage');
    expect((await execute('crm_nope', {})).status).toBe(404);
    const lead = await run('crm_create_lead', { first_name: 'Skip', last_name: 'Ahead' });
    const skip = await execute('crm_update_lead', { lead_id: lead.id, status: 'qualified' });
    expect(skip.status).toBe(409);
    expect((await skip.json()).allowed_next_states).toEqual(['contacted', 'unqualified']);
    expect((await api.request('/api/v1/tools', { auth: false })).status).toBe(401);
  });
});

/** Runs the same checks through an MCP client on any transport. */
async function exerciseMcp(client: Client, label: string) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const name of specTools) expect(names).toContain(name);
  expect(tools.find((t) => t.name === 'crm_create_lead')!.inputSchema.required).toEqual(['first_name', 'last_name']);
  const created = await client.callTool({ name: 'crm_create_lead', arguments: { first_name: 'Mcp', last_name: label, company: 'Protocol Inc' } });
  expect(created.isError).toBeFalsy();
  const lead = JSON.parse((created.content as Array<{ text: string }>)[0]!.text);
  expect(lead).toMatchObject({ first_name: 'Mcp', last_name: label, status: 'new' });
  const fetched = await client.callTool({ name: 'crm_get_lead', arguments: { lead_id: lead.id } });
  expect(JSON.parse((fetched.content as Array<{ text: string }>)[0]!.text).id).toBe(lead.id);
  const bad = await client.callTool({ name: 'crm_update_lead', arguments: { lead_id: 'not-a-uuid', status: 'won' } });
  expect(bad.isError).toBe(true);
  const error = JSON.parse((bad.content as Array<{ text: string }>)[0]!.text);
  expect(error.errors.map((e: { path: string }) => e.path).sort()).toEqual(['input.lead_id', 'input.status']);
  const summary = await client.callTool({ name: 'crm_get_pipeline_summary', arguments: {} });
  expect(Object.keys(JSON.parse((summary.content as Array<{ text: string }>)[0]!.text).stages)).toEqual(['Lead', 'Discovery', 'Proposal', 'Negotiation', 'Closed Won', 'Closed Lost']);
}

describe('MCP', () => {
  const clients: Client[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
  });

  it('over Streamable HTTP at /mcp (API key) exposes and runs the tools', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { requestInit: { headers: { 'X-API-Key': testApiKey } } }));
    await exerciseMcp(client, 'Http');
    const anonymous = await fetch(`${api.url}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
    expect(anonymous.status).toBe(401);
  });

  it('over stdio (npm run mcp:crm entry) exposes and runs the tools against the same database', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    clients.push(client);
    const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
    await client.connect(new StdioClientTransport({ command: 'npx', args: ['tsx', 'shared/cli/mcp-crm.ts'], env: { ...env, LOG_LEVEL: 'info' }, stderr: 'ignore' }));
    await exerciseMcp(client, 'Stdio');
    const { data } = await (await api.request('/api/v1/leads?q=Stdio')).json();
    expect(data).toHaveLength(1);
  }, 60_000);
});
