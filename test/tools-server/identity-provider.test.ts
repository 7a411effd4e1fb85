/**
 * The tools role with IDENTITY_BASE_URL set to the embedded identity provider (the one `npm run dev`
 * runs): a token the provider issues through client credentials for the tool server is accepted over
 * MCP; no token, a wrong one, a forged one (same claims, another key) and one for another audience are
 * 401s with a Bearer challenge, and none of them reaches the tracker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { generateKeyPair, SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startIdentity, type Identity } from '../helpers/identity.js';
import { startLocalGitLab, type LocalGitLab } from '../helpers/local-gitlab-server.js';
import { freePort } from '../helpers/ports.js';

const trackerToken = 'glpat-test-writer-token';
const otherResource = 'http://billing-tools.internal:9400/mcp';

let gitlab: LocalGitLab;
let idp: Identity;
let role: ChildProcess;
let toolsUrl: string;
const clients: Client[] = [];

async function tokenFor(params: Record<string, string>): Promise<Response> {
  const { clientId, clientSecret, tokenEndpoint } = idp.provider.toolsClient!;
  return fetch(tokenEndpoint, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', ...params }).toString(),
  });
}
async function accessToken(resource?: string): Promise<string> {
  const res = await tokenFor(resource ? { resource, scope: 'mcp' } : { scope: 'mcp' });
  const body = (await res.json()) as { access_token?: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.access_token!;
}

/** An MCP tools/call with the given headers, as a client without the SDK would send it. */
const rawCall = (headers: Record<string, string> = {}, title = 'Unauthorised') =>
  fetch(`${toolsUrl}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'tracker_create_issue', arguments: { title } } }),
  });

async function connect(bearer: string): Promise<Client> {
  const client = new Client({ name: 'idp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${toolsUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }));
  clients.push(client);
  return client;
}

beforeAll(async () => {
  gitlab = await startLocalGitLab({ token: trackerToken, readOnlyToken: 'glpat-test-reader-token' });
  const port = await freePort();
  toolsUrl = `http://127.0.0.1:${port}`;
  idp = await startIdentity({ toolResources: [`${toolsUrl}/mcp`, otherResource] });
  role = spawn(process.execPath, ['--import', 'tsx', path.resolve(import.meta.dirname, '../../api/tools-server/main.ts')], {
    env: {
      PATH: process.env.PATH!, NODE_ENV: 'test', HOST: '127.0.0.1', LOG_LEVEL: 'warn',
      MCP_SERVICE_PORT: String(port), MCP_SERVICE_URL: toolsUrl, IDENTITY_BASE_URL: idp.provider.issuer,
      ISSUE_TRACKER_API_URL: gitlab.url, ISSUE_TRACKER_BASE_URL: 'https://gitlab.example.com', ISSUE_TRACKER_PROJECT_PATH: gitlab.projectPath, ISSUE_TRACKER_MCP_TOKEN: trackerToken,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (let i = 0; i < 150 && !(await fetch(`${toolsUrl}/healthz`).then((r) => r.ok, () => false)); i++) await new Promise((r) => setTimeout(r, 100));
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  role?.kill('SIGTERM');
  await gitlab?.close();
});

describe('the tool server with IDENTITY_BASE_URL = the embedded identity provider', () => {
  it('the provider issues a JWT access token for the tool server: at+jwt, its issuer, the resource as audience, scope mcp', async () => {
    const token = await accessToken(`${toolsUrl}/mcp`);
    expect(decodeProtectedHeader(token)).toMatchObject({ typ: 'at+jwt', alg: 'RS256' });
    expect(decodeJwt(token)).toMatchObject({ iss: idp.provider.issuer, aud: `${toolsUrl}/mcp`, scope: 'mcp', client_id: idp.provider.toolsClient!.clientId });
    const unknown = await tokenFor({ resource: 'http://elsewhere.example/mcp' });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ error: 'invalid_target' });
  });

  it('a token from the provider is accepted: tools/list and a tool call reach the tracker', async () => {
    const client = await connect(await accessToken(`${toolsUrl}/mcp`));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('tracker_get_issue');
    const before = gitlab.requests.length;
    const result = (await client.callTool({ name: 'tracker_get_issue', arguments: { iid: 1 } })) as { isError?: boolean; content: Array<{ text: string }> };
    expect(result.isError ?? false).toBe(false);
    expect(JSON.parse(result.content[0]!.text).iid).toBe(1);
    expect(gitlab.requests.length).toBeGreaterThan(before);
  });

  it('without a resource parameter the tools client still gets a token for the tool server', async () => {
    const token = await accessToken();
    expect(decodeJwt(token).aud).toBe(`${toolsUrl}/mcp`);
    expect((await rawCall({ Authorization: `Bearer ${token}` }, 'Default resource')).status).toBe(200);
    expect(gitlab.issues.some((i) => i.title === 'Default resource')).toBe(true);
  });

  it('missing, wrong, forged and other-audience tokens are 401s with a Bearer challenge, and none reaches the tracker', async () => {
    const metadata = `resource_metadata="${toolsUrl}/.well-known/oauth-protected-resource"`;
    const genuine = await accessToken(`${toolsUrl}/mcp`);
    // Same header (kid) and claims as the genuine token, signed with a key the provider never published.
    const forger = await generateKeyPair('RS256');
    const forged = await new SignJWT(decodeJwt(genuine)).setProtectedHeader(decodeProtectedHeader(genuine) as { alg: string }).sign(forger.privateKey);
    const otherAudience = await accessToken(otherResource);
    expect(decodeJwt(otherAudience)).toMatchObject({ iss: idp.provider.issuer, aud: otherResource });

    const before = gitlab.requests.length;
    const missing = await rawCall();
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe(`Bearer realm="issue-tracker", ${metadata}`);
    for (const [name, bad] of [['wrong', 'not-a-jwt'], ['forged', forged], ['other audience', otherAudience]] as const) {
      const res = await rawCall({ Authorization: `Bearer ${bad}` });
      expect(res.status, name).toBe(401);
      expect(res.headers.get('www-authenticate'), name).toMatch(/^Bearer realm="issue-tracker", error="invalid_token", error_description="/);
      expect(res.headers.get('www-authenticate'), name).toContain(metadata);
      expect(res.headers.get('content-type'), name).toContain('application/problem+json');
    }
    await expect(connect(forged)).rejects.toThrow();
    expect(gitlab.requests.length).toBe(before);
    expect(gitlab.issues.some((i) => i.title === 'Unauthorised')).toBe(false);
    // The same call with the genuine token does land, so the refusals above were about the token.
    expect((await rawCall({ Authorization: `Bearer ${genuine}` })).status).toBe(200);
    expect(gitlab.issues.some((i) => i.title === 'Unauthorised')).toBe(true);
  });

  it('the protected-resource metadata names the provider as the authorization server', async () => {
    const metadata = await (await fetch(`${toolsUrl}/.well-known/oauth-protected-resource`)).json();
    expect(metadata).toEqual({ resource: `${toolsUrl}/mcp`, authorization_servers: [idp.provider.issuer], bearer_methods_supported: ['header'] });
  });
});
