/**
 * The issue-tracker tool server over MCP (official SDK client, Streamable HTTP) against a local server
 * speaking GitLab's REST v4: every capability end to end, tracker errors as readable tool errors,
 * timeouts, TLS verification on and off, and who may call it.
 */
// needs: openssl
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { startToolServer, type ToolServer } from '../../api/tools-server/server.js';
import { loadIssueTrackerTools } from '../../shared/tool-catalog.js';
import { identityProviderTokens, serviceTokens } from '../../api/tools-server/auth.js';
import { createTracker, type TrackerSettings } from '../../shared/issue-tracker/tracker.js';
import { startLocalGitLab, type LocalGitLab } from '../helpers/local-gitlab-server.js';
import { freePort } from '../helpers/ports.js';

// What the tools role's main.ts does at start-up.
loadIssueTrackerTools();

const token = 'glpat-test-writer-token';
const serviceToken = 'svc-token-for-tests';
const publicBase = 'https://gitlab.example.com';

let gitlab: LocalGitLab;
let tools: ToolServer;
const started: Array<{ close(): Promise<void> }> = [];

function settings(over: Partial<TrackerSettings> = {}): TrackerSettings {
  return { apiUrl: gitlab.url, baseUrl: publicBase, projectPath: gitlab.projectPath, token, verifySsl: true, timeoutMs: 5000, ...over };
}

async function serverFor(over: Partial<TrackerSettings>): Promise<ToolServer> {
  const s = await startToolServer({ port: 0, host: '127.0.0.1', auth: serviceTokens([serviceToken]), tracker: createTracker(settings(over)) });
  started.push(s);
  return s;
}

async function connect(server: ToolServer, bearer: string = serviceToken): Promise<Client> {
  const client = new Client({ name: 'issue-tracker-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }));
  started.push({ close: () => client.close() });
  return client;
}

type CallResult = { isError?: boolean; content: Array<{ type: string; text: string }> };
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallResult;
  return { isError: Boolean(result.isError), body: JSON.parse(result.content[0]!.text) };
}
async function ok(client: Client, name: string, args: Record<string, unknown> = {}) {
  const r = await call(client, name, args);
  expect(r.isError, `${name}: ${JSON.stringify(r.body)}`).toBe(false);
  return r.body;
}

beforeAll(async () => {
  gitlab = await startLocalGitLab({ token, readOnlyToken: 'glpat-test-reader-token' });
  tools = await serverFor({});
});
afterAll(async () => {
  for (const s of started.reverse()) await s.close().catch(() => {});
  await gitlab.close();
});

describe('issue-tracker tools over MCP', () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(tools);
  });

  it('lists the issue_tracker tools of the registry with their input schemas', async () => {
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name).sort()).toEqual([
      'tracker_comment_issue', 'tracker_comment_merge_request', 'tracker_create_issue', 'tracker_create_merge_request', 'tracker_get_issue',
      'tracker_get_merge_request', 'tracker_get_pipeline', 'tracker_latest_pipeline', 'tracker_list_issues', 'tracker_list_merge_requests',
      'tracker_list_tree', 'tracker_read_file', 'tracker_search_files', 'tracker_update_issue', 'tracker_update_merge_request', 'tracker_write_file',
    ]);
    expect(listed.find((t) => t.name === 'tracker_write_file')!.inputSchema.required).toEqual(['path', 'content', 'branch', 'commit_message']);
    expect(listed.some((t) => t.name.startsWith('crm_'))).toBe(false);
  });

  it('browses the repository: tree of a folder, recursive tree, search by path, and every call carries PRIVATE-TOKEN', async () => {
    const top = await ok(client, 'tracker_list_tree', {});
    expect(top.ref).toBe('main');
    expect(top.entries).toEqual(expect.arrayContaining([{ path: 'README.md', type: 'blob' }, { path: 'src', type: 'tree' }]));
    expect(top.entries.some((e: { path: string }) => e.path === 'src/index.ts')).toBe(false);
    const src = await ok(client, 'tracker_list_tree', { path: 'src', recursive: true });
    expect(src.entries.map((e: { path: string }) => e.path)).toEqual(['src/index.ts', 'src/lib', 'src/lib/util.ts']);
    const found = await ok(client, 'tracker_search_files', { query: 'UTIL' });
    expect(found.files).toEqual([{ path: 'src/lib/util.ts', link: `${publicBase}/${gitlab.projectPath}/-/blob/main/src/lib/util.ts` }]);
    const treeCall = gitlab.requests.find((r) => r.path.endsWith('/repository/tree') && r.query.get('path') === 'src')!;
    expect(treeCall.path).toBe(`/api/v4/projects/${encodeURIComponent(gitlab.projectPath)}/repository/tree`);
    expect(treeCall.query.get('recursive')).toBe('true');
    expect(gitlab.requests.every((r) => r.headers['private-token'] === token)).toBe(true);
  });

  it('reads a text file (decoded from base64) and reports a binary one without its bytes', async () => {
    const file = await ok(client, 'tracker_read_file', { path: 'src/lib/util.ts' });
    expect(file).toMatchObject({ path: 'src/lib/util.ts', ref: 'main', binary: false, truncated: false, link: `${publicBase}/${gitlab.projectPath}/-/blob/main/src/lib/util.ts` });
    expect(file.content).toContain('return a + b;');
    const binary = await ok(client, 'tracker_read_file', { path: 'assets/logo.bin' });
    expect(binary).toMatchObject({ binary: true, content: null });
  });

  it('a file write lands as a commit on a new branch, and a merge request from it shows the diff, takes a comment and merges', async () => {
    const written = await ok(client, 'tracker_write_file', {
      path: 'src/lib/util.ts', branch: 'fix/add-sub', commit_message: 'Add sub()',
      content: 'export function add(a: number, b: number) {\n  return a + b;\n}\nexport function sub(a: number, b: number) {\n  return a - b;\n}\n',
    });
    expect(written).toMatchObject({ branch: 'fix/add-sub', created_branch: true, action: 'update', path: 'src/lib/util.ts' });
    const commitCall = gitlab.requests.find((r) => r.method === 'POST' && r.path.endsWith('/repository/commits'))!;
    expect(commitCall.body).toMatchObject({ branch: 'fix/add-sub', start_branch: 'main', commit_message: 'Add sub()', actions: [{ action: 'update', file_path: 'src/lib/util.ts' }] });
    expect(gitlab.branches.get('fix/add-sub')!.commit).toBe(written.commit.id);
    expect(gitlab.branches.get('fix/add-sub')!.files.get('src/lib/util.ts')).toContain('sub(');
    expect(gitlab.branches.get('main')!.files.get('src/lib/util.ts')).not.toContain('sub(');
    expect(written.commit.link).toBe(`${publicBase}/${gitlab.projectPath}/-/commit/${written.commit.id}`);

    const second = await ok(client, 'tracker_write_file', { path: 'docs/sub.md', branch: 'fix/add-sub', commit_message: 'Document sub()', content: '# sub\n' });
    expect(second).toMatchObject({ created_branch: false, action: 'create' });
    expect(await ok(client, 'tracker_read_file', { path: 'docs/sub.md', ref: 'fix/add-sub' })).toMatchObject({ content: '# sub\n' });

    const mr = await ok(client, 'tracker_create_merge_request', { source_branch: 'fix/add-sub', title: 'Add sub()', description: 'Adds subtraction.' });
    expect(mr).toMatchObject({ iid: 1, state: 'opened', source_branch: 'fix/add-sub', target_branch: 'main', link: `${publicBase}/${gitlab.projectPath}/-/merge_requests/1` });
    const read = await ok(client, 'tracker_get_merge_request', { iid: mr.iid });
    expect(read.description).toBe('Adds subtraction.');
    expect(read.diff_summary).toMatchObject({ files_changed: 2 });
    const util = read.diff_summary.files.find((f: { new_path: string }) => f.new_path === 'src/lib/util.ts');
    expect(util).toMatchObject({ new_file: false, additions: 6, deletions: 3 });
    expect(read.diff_summary.files.find((f: { new_path: string }) => f.new_path === 'docs/sub.md')).toMatchObject({ new_file: true, additions: 1, deletions: 0 });

    const listed = await ok(client, 'tracker_list_merge_requests', { state: 'opened' });
    expect(listed.merge_requests.map((m: { iid: number }) => m.iid)).toEqual([1]);
    const note = await ok(client, 'tracker_comment_merge_request', { iid: 1, body: 'LGTM' });
    expect(note).toMatchObject({ body: 'LGTM', link: expect.stringContaining('/-/merge_requests/1#note_') });
    expect(gitlab.requests.some((r) => r.method === 'POST' && r.path.endsWith('/merge_requests/1/notes') && r.body.body === 'LGTM')).toBe(true);

    const retitled = await ok(client, 'tracker_update_merge_request', { iid: 1, title: 'Add sub() to util' });
    expect(retitled.title).toBe('Add sub() to util');
    const merged = await ok(client, 'tracker_update_merge_request', { iid: 1, state_event: 'merge' });
    expect(merged.state).toBe('merged');
    expect(gitlab.branches.get('main')!.files.get('src/lib/util.ts')).toContain('sub(');
  });

  it('refuses a write to the default branch unless allow_default_branch is true', async () => {
    const before = gitlab.branches.get('main')!.commit;
    const refused = await call(client, 'tracker_write_file', { path: 'README.md', branch: 'main', commit_message: 'Edit', content: 'x' });
    expect(refused.isError).toBe(true);
    expect(refused.body.errors).toEqual([{ path: 'input.branch', message: expect.stringContaining('default branch') }]);
    expect(gitlab.branches.get('main')!.commit).toBe(before);
    const allowed = await ok(client, 'tracker_write_file', { path: 'README.md', branch: 'main', commit_message: 'Edit README', content: '# Demo\n', allow_default_branch: true });
    expect(allowed).toMatchObject({ created_branch: false, action: 'update' });
    expect(gitlab.branches.get('main')!.commit).toBe(allowed.commit.id);
  });

  it('the default-branch guard compares the branch as GitLab resolves it (refs/heads/main is main)', async () => {
    const before = gitlab.branches.get('main')!.commit;
    for (const branch of ['refs/heads/main', 'heads/main']) {
      const refused = await call(client, 'tracker_write_file', { path: 'README.md', branch, commit_message: 'Edit', content: 'x' });
      expect(refused.isError, branch).toBe(true);
      expect(refused.body.errors).toEqual([{ path: 'input.branch', message: expect.stringContaining('default branch') }]);
    }
    expect(gitlab.branches.get('main')!.commit).toBe(before);
  });

  it('refuses paths with .. segments or a leading / before any tracker call', async () => {
    const before = gitlab.requests.length;
    for (const [name, args] of [
      ['tracker_read_file', { path: '../other-project/secrets.env' }],
      ['tracker_read_file', { path: '/etc/passwd' }],
      ['tracker_list_tree', { path: 'src/../../x' }],
      ['tracker_write_file', { path: 'src/./../x.txt', branch: 'feat/y', commit_message: 'y', content: 'y' }],
    ] as const) {
      const res = await call(client, name, args);
      expect(res.isError, `${name} ${args.path}`).toBe(true);
      expect(res.body.errors[0].path).toBe('input.path');
    }
    expect(gitlab.requests.length).toBe(before);
  });

  it('closes and reopens a merge request', async () => {
    await ok(client, 'tracker_write_file', { path: 'x.txt', branch: 'feat/x', commit_message: 'x', content: 'x\n' });
    const mr = await ok(client, 'tracker_create_merge_request', { source_branch: 'feat/x', title: 'X' });
    expect((await ok(client, 'tracker_update_merge_request', { iid: mr.iid, state_event: 'close' })).state).toBe('closed');
    expect((await ok(client, 'tracker_update_merge_request', { iid: mr.iid, state_event: 'reopen' })).state).toBe('opened');
  });

  it('tracks issues: list, read with comments, create, update labels and state, comment', async () => {
    const listed = await ok(client, 'tracker_list_issues', { labels: ['sre'] });
    expect(listed.issues.map((i: { title: string }) => i.title)).toEqual(['Checkout latency']);
    const one = await ok(client, 'tracker_get_issue', { iid: 1 });
    expect(one).toMatchObject({ iid: 1, description: 'p99 above 2 s', labels: ['bug', 'sre'], link: `${publicBase}/${gitlab.projectPath}/-/issues/1` });
    expect(one.comments.map((c: { body: string }) => c.body)).toEqual(['Seen again this morning.']);
    const created = await ok(client, 'tracker_create_issue', { title: 'Disk full on db-1', description: 'at 95 %', labels: ['sre', 'db'] });
    expect(created).toMatchObject({ iid: 2, state: 'opened', labels: ['sre', 'db'] });
    expect(gitlab.issues[1]).toMatchObject({ title: 'Disk full on db-1', description: 'at 95 %' });
    const updated = await ok(client, 'tracker_update_issue', { iid: 2, add_labels: ['p1'], remove_labels: ['db'], state_event: 'close' });
    expect(updated).toMatchObject({ state: 'closed', labels: ['sre', 'p1'] });
    const note = await ok(client, 'tracker_comment_issue', { iid: 2, body: 'Rotated the logs.' });
    expect(note.body).toBe('Rotated the logs.');
    expect((await ok(client, 'tracker_get_issue', { iid: 2 })).comments.map((c: { body: string }) => c.body)).toEqual(['Rotated the logs.']);
    expect((await ok(client, 'tracker_list_issues', { state: 'closed' })).issues.map((i: { iid: number }) => i.iid)).toEqual([2]);
    const nothing = await call(client, 'tracker_update_issue', { iid: 2 });
    expect(nothing.isError).toBe(true);
  });

  it('reports pipeline status: the latest of a ref, and one pipeline with its jobs', async () => {
    const latest = await ok(client, 'tracker_latest_pipeline', { ref: 'main' });
    expect(latest).toMatchObject({ id: 900, status: 'failed', ref: 'main', link: `${publicBase}/${gitlab.projectPath}/-/pipelines/900` });
    const full = await ok(client, 'tracker_get_pipeline', { pipeline_id: 900 });
    expect(full.jobs.map((j: { name: string; status: string }) => `${j.name}:${j.status}`)).toEqual(['build:success', 'unit:failed', 'lint:success']);
    expect(full.jobs[1]).toMatchObject({ stage: 'test', link: `${publicBase}/${gitlab.projectPath}/-/jobs/9002` });
    expect(gitlab.requests.some((r) => r.path.endsWith('/pipelines/latest') && r.query.get('ref') === 'main')).toBe(true);
  });
});

describe('tracker errors come back as tool errors the model can read', () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(tools);
  });

  it('404: an unknown issue, file or pipeline is "not found" with the tracker\'s message', async () => {
    const issue = await call(client, 'tracker_get_issue', { iid: 999 });
    expect(issue.isError).toBe(true);
    expect(issue.body).toMatchObject({ error: expect.stringMatching(/^Reading issue #999: not found \(404 Not found\)/), tracker_status: 404 });
    const file = await call(client, 'tracker_read_file', { path: 'nope.txt' });
    expect(file.body).toMatchObject({ error: expect.stringContaining('not found (404 File Not Found)'), tracker_status: 404 });
  });

  it('409: a second merge request for the same branches is a conflict naming the existing one', async () => {
    await ok(client, 'tracker_write_file', { path: 'y.txt', branch: 'feat/y', commit_message: 'y', content: 'y\n' });
    await ok(client, 'tracker_create_merge_request', { source_branch: 'feat/y', title: 'Y' });
    const again = await call(client, 'tracker_create_merge_request', { source_branch: 'feat/y', title: 'Y again' });
    expect(again.isError).toBe(true);
    expect(again.body.error).toMatch(/conflict \(.*Another open merge request already exists for this source branch/);
    expect(again.body.tracker_status).toBe(409);
  });

  it('403: a token without write access gets "permission denied"', async () => {
    const reader = await serverFor({ token: 'glpat-test-reader-token' });
    const readerClient = await connect(reader);
    expect((await ok(readerClient, 'tracker_get_issue', { iid: 1 })).iid).toBe(1);
    const denied = await call(readerClient, 'tracker_create_issue', { title: 'Should not exist' });
    expect(denied.isError).toBe(true);
    expect(denied.body).toMatchObject({ error: expect.stringContaining('permission denied by the issue tracker (403 Forbidden)'), tracker_status: 403 });
    expect(gitlab.issues.some((i) => i.title === 'Should not exist')).toBe(false);
  });

  it('a tracker slower than the timeout gives a bounded, readable timeout', async () => {
    const impatient = await serverFor({ timeoutMs: 300 });
    const impatientClient = await connect(impatient);
    gitlab.setDelay(2000);
    try {
      const startedAt = Date.now();
      const slow = await call(impatientClient, 'tracker_get_issue', { iid: 1 });
      expect(Date.now() - startedAt).toBeLessThan(1500);
      expect(slow.isError).toBe(true);
      expect(slow.body.error).toMatch(/did not answer within 300 ms/);
    } finally {
      gitlab.setDelay(0);
    }
  });

  it('a tracker that is not configured is named, not crashed on', async () => {
    const bare = await startToolServer({ port: 0, host: '127.0.0.1', auth: serviceTokens([serviceToken]) });
    started.push(bare);
    const bareClient = await connect(bare);
    const r = await call(bareClient, 'tracker_list_issues', {});
    expect(r.isError).toBe(true);
    expect(r.body.error).toMatch(/not configured: set ISSUE_TRACKER_API_URL/);
  });
});

describe('TLS verification of the internal address (ISSUE_TRACKER_VERIFY_SSL)', () => {
  let secure: LocalGitLab;
  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${dir}/key.pem`, '-out', `${dir}/cert.pem`, '-days', '1',
      '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    secure = await startLocalGitLab({ token, tls: { key: readFileSync(`${dir}/key.pem`, 'utf8'), cert: readFileSync(`${dir}/cert.pem`, 'utf8') } });
    started.push(secure);
  });

  it('verification on: a self-signed tracker is refused and nothing is read', async () => {
    const strict = await connect(await serverFor({ apiUrl: secure.url, verifySsl: true }));
    const r = await call(strict, 'tracker_get_issue', { iid: 1 });
    expect(r.isError).toBe(true);
    expect(r.body.error).toMatch(/unreachable: .*(SELF_SIGNED|self-signed|DEPTH_ZERO)/i);
    expect(secure.requests).toHaveLength(0);
  });

  it('verification off: the same tracker answers, while other https calls of the process still verify', async () => {
    const lax = await connect(await serverFor({ apiUrl: secure.url, verifySsl: false }));
    expect((await ok(lax, 'tracker_get_issue', { iid: 1 })).title).toBe('Checkout latency');
    expect(secure.requests.length).toBeGreaterThan(0);
    await expect(fetch(`${secure.url}/api/v4/projects/42`)).rejects.toThrow();
  });
});

describe('who may call the tool server', () => {
  const raw = (server: ToolServer, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'tracker_create_issue', arguments: { title: 'Unauthorised' } } }),
    });

  it('no token → 401 with a Bearer challenge; a wrong token → 401 invalid_token; neither reaches the tracker', async () => {
    const before = gitlab.requests.length;
    const missing = await raw(tools);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="issue-tracker"');
    const wrong = await raw(tools, { Authorization: 'Bearer not-the-token' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Bearer realm="issue-tracker", error="invalid_token", error_description="/);
    expect((await wrong.json()).status).toBe(401);
    await expect(connect(tools, 'not-the-token')).rejects.toThrow();
    expect(gitlab.requests.length).toBe(before);
    expect(gitlab.issues.some((i) => i.title === 'Unauthorised')).toBe(false);
    const good = await raw(tools, { Authorization: `Bearer ${serviceToken}` });
    expect(good.status).toBe(200);
    expect(gitlab.issues.some((i) => i.title === 'Unauthorised')).toBe(true);
  });

  it('with an identity provider: a JWT it signed for this server is accepted; expired and wrong-issuer ones are refused', async () => {
    // A hand-made identity provider (discovery document + JWKS) so the test can sign any claims, here an
    // expired token and one naming another issuer; forged and other-audience tokens of the real embedded
    // provider are in identity-provider.test.ts.
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    const idp = http.createServer((req, res) => {
      const base = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
      res.setHeader('Content-Type', 'application/json');
      if (req.url === '/.well-known/openid-configuration') return res.end(JSON.stringify({ issuer: base, jwks_uri: `${base}/jwks`, authorization_endpoint: `${base}/auth`, token_endpoint: `${base}/token` }));
      if (req.url === '/jwks') return res.end(JSON.stringify({ keys: [jwk] }));
      res.statusCode = 404;
      res.end('{}');
    });
    await new Promise<void>((r) => idp.listen(0, '127.0.0.1', r));
    started.push({ close: () => new Promise<void>((r) => idp.close(() => r())) });
    const issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
    const audience = 'http://tools.internal:9400';
    const server = await startToolServer({
      port: 0, host: '127.0.0.1', publicUrl: audience, auth: identityProviderTokens(issuer, [audience, `${audience}/mcp`]), tracker: createTracker(settings()),
    });
    started.push(server);
    const sign = (key: CryptoKey | Uint8Array, claims: { iss?: string; exp?: string } = {}) =>
      new SignJWT({ scope: 'mcp' }).setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'at+jwt' }).setSubject('maria').setIssuer(claims.iss ?? issuer)
        .setAudience(`${audience}/mcp`).setIssuedAt().setExpirationTime(claims.exp ?? '5m').sign(key);

    const valid = await connect(server, await sign(privateKey));
    expect((await ok(valid, 'tracker_get_issue', { iid: 1 })).iid).toBe(1);

    const before = gitlab.requests.length;
    for (const bad of [
      await sign(privateKey, { iss: 'https://evil.example' }),
      await sign(privateKey, { exp: '-1m' }),
    ]) {
      const res = await raw(server, { Authorization: `Bearer ${bad}` });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain(`resource_metadata="${audience}/.well-known/oauth-protected-resource"`);
    }
    expect(gitlab.requests.length).toBe(before);
    const metadata = await (await fetch(`${server.url}/.well-known/oauth-protected-resource`)).json();
    expect(metadata).toEqual({ resource: `${audience}/mcp`, authorization_servers: [issuer], bearer_methods_supported: ['header'] });
  });
});

describe('the tools role (api/tools-server/main.ts)', () => {
  const entry = path.resolve(import.meta.dirname, '../../api/tools-server/main.ts');
  const role = (env: Record<string, string>) =>
    spawn(process.execPath, ['--import', 'tsx', entry], { env: { PATH: process.env.PATH!, NODE_ENV: 'test', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });

  it('serves the configured tracker on MCP_SERVICE_PORT to a holder of one of MCP_SERVICE_TOKENS', async () => {
    const port = await freePort();
    const child = role({
      MCP_SERVICE_PORT: String(port), MCP_SERVICE_TOKENS: `other, ${serviceToken}`,
      ISSUE_TRACKER_API_URL: gitlab.url, ISSUE_TRACKER_BASE_URL: publicBase, ISSUE_TRACKER_PROJECT_PATH: gitlab.projectPath, ISSUE_TRACKER_MCP_TOKEN: token,
    });
    try {
      const url = `http://127.0.0.1:${port}`;
      for (let i = 0; i < 100 && !(await fetch(`${url}/healthz`).then((r) => r.ok, () => false)); i++) await new Promise((r) => setTimeout(r, 100));
      const client = await connect({ url } as ToolServer);
      expect((await ok(client, 'tracker_latest_pipeline', {})).link).toBe(`${publicBase}/${gitlab.projectPath}/-/pipelines/900`);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('refuses to start when nobody could call it (no MCP_SERVICE_TOKENS, no IDENTITY_BASE_URL)', async () => {
    const child = role({ MCP_SERVICE_PORT: String(await freePort()) });
    let stderr = '';
    child.stderr!.on('data', (c) => (stderr += c));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('MCP_SERVICE_TOKENS: required by the tools role when IDENTITY_BASE_URL is unset');
  });
});
