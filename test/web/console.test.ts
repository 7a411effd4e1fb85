/**
 * The SRE console in real Chromium: an SRE signs in through the embedded provider's form and works
 * through the five screens; what the browser does is checked in Postgres and at the local servers
 * standing in for the escalation webhook, the container runtime and the proxy.
 */
// needs: chromium
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { firing, localServer } from '../sre/alerting-helpers.js';
import { eventually } from '../helpers/eventually.js';
import { dockerApiServer, traefikApiServer } from '../sre/discovery-servers.js';
import { launchBrowser, screenshot, signInAt } from '../helpers/browser.js';
import { devAccounts, startIdentity } from '../helpers/identity.js';

const pager = await localServer((_req, res) => void res.writeHead(200).end('ok'));
const container = (name: string, ip: string, project: string) => ({
  Id: `${name}-0123456789abcdef`,
  Names: [`/${name}`],
  Image: `example/${name}:1`,
  State: 'running',
  Status: 'Up 5 minutes (healthy)',
  Labels: { 'com.docker.compose.project': project, 'com.docker.compose.service': name, 'com.docker.compose.oneoff': 'False' },
  Ports: [{ PrivatePort: 80, Type: 'tcp' }],
  NetworkSettings: { Networks: { shop_default: { IPAddress: ip, Aliases: null } } },
});
const dockerApi = await dockerApiServer({ containers: [container('shop-web-1', '172.20.0.2', 'shop'), container('shop-db-1', '172.20.0.3', 'shop')] });
const traefikApi = await traefikApiServer({
  routers: [{ name: 'shop@docker', provider: 'docker', rule: 'Host(`shop.example.com`)', service: 'shop', entryPoints: ['websecure'], status: 'enabled' }],
  services: [{ name: 'shop@docker', provider: 'docker', type: 'loadbalancer', status: 'enabled', loadBalancer: { servers: [{ url: 'http://172.20.0.2:80' }] }, serverStatus: { 'http://172.20.0.2:80': 'UP' } }],
});
Object.assign(process.env, {
  CONTAINER_RUNTIME_HOST: `tcp://127.0.0.1:${dockerApi.port}`,
  PROXY_API_URL: traefikApi.url,
  DISCOVERY_ENABLED: 'false',
  ESCALATION_WEBHOOK_URL: `${pager.url}/escalations`,
  // The local server also stands in for the automation system runbooks must target.
  AUTOMATION_URL: pager.url,
});
afterAll(() => Promise.all([dockerApi.close(), traefikApi.close()]));

const idp = await startIdentity();
const { startPlatform } = await import('../helpers/platform.js');
const { db } = await import('../../shared/db/index.js');
const app = await startPlatform({ port: idp.appPort });
const browser = await launchBrowser();
const sreName = devAccounts.sre.name;

const postAlert = (body: unknown) => app.request('/webhooks/alertmanager/default', { method: 'POST', json: body, auth: false });
const api = async <T = any>(path: string, init?: Parameters<typeof app.request>[1]) => {
  const res = await app.request(path, init);
  expect(res.status, `${path}: ${res.status}`).toBeLessThan(300);
  return (await res.json()) as T;
};

let sre: BrowserContext;
let page: Page;

beforeAll(async () => {
  sre = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await signInAt(sre, app.url, '/admin/alerts', 'sre');
}, 120_000);

describe('SRE console in Chromium', () => {
  it('alerts: API data on the dashboard; acknowledging in the browser is recorded by the person', async () => {
    const posted = await postAlert(firing('DiskAlmostFull', { severity: 'warning' }));
    expect(posted.status, await posted.text()).toBeLessThan(300);
    const alert = await eventually(async () => (await api<{ items: Array<{ id: string }> }>('/api/v1/alerts?q=DiskAlmostFull')).items[0]);
    await page.goto(`${app.url}/admin/alerts`);
    await expect.poll(() => page.getByRole('link', { name: 'DiskAlmostFull' }).count(), { timeout: 15_000 }).toBe(1);
    await expect.poll(() => page.getByText(sreName).count()).toBeGreaterThan(0);
    await screenshot(page, '1-alerts');

    await page.getByRole('button', { name: 'Acknowledge DiskAlmostFull' }).click();
    const row = await eventually(async () => (await db()('sre_alert_state_history').where({ alert_id: alert.id, to_status: 'acknowledged' }).first()) as { actor: string } | undefined);
    expect(row.actor).toBe(sreName);
    expect((await db()('sre_alert_instances').where({ id: alert.id }).first()).status).toBe('acknowledged');

    await page.getByRole('link', { name: 'DiskAlmostFull' }).click();
    await page.getByRole('table', { name: 'State history' }).getByText(sreName).waitFor();
    await screenshot(page, '1-alert-detail');
  });

  it('alerts: a firing posted to the webhook appears on an open dashboard within 2 s, without reload', async () => {
    await page.goto(`${app.url}/admin/alerts`);
    await page.getByRole('table', { name: 'Alerts' }).waitFor();
    const navigations: string[] = [];
    page.on('framenavigated', (f) => f === page.mainFrame() && navigations.push(f.url()));
    const posted = Date.now();
    expect((await postAlert(firing('LiveOne'))).status).toBeLessThan(300);
    await page.getByRole('link', { name: 'LiveOne' }).waitFor({ timeout: 2_000 });
    console.log(`live alert visible after ${Date.now() - posted} ms`);
    expect(navigations).toEqual([]);
  });

  it('incidents: API data listed; escalating in the browser reaches the escalation webhook', async () => {
    const incident = await api<{ id: string }>('/api/v1/incidents', { method: 'POST', json: { title: 'Checkout is slow', severity: 'critical', by: 'api-test' } });
    await page.goto(`${app.url}/admin/incidents`);
    await page.getByRole('link', { name: 'Checkout is slow' }).click();
    await page.waitForURL(`${app.url}/admin/incidents/${incident.id}`);
    await page.getByRole('button', { name: 'Escalate' }).click();
    await page.getByLabel('Reason').fill('customer impact, paging the on-call');
    await page.getByRole('button', { name: 'Send escalation' }).click();
    const sent = await eventually(async () => pager.requests.find((r) => r.url === '/escalations'));
    expect(sent.body).toMatchObject({ event: 'incident.escalated', reason: 'customer impact, paging the on-call', escalated_by: sreName });
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    await page.getByText('customer impact, paging the on-call').first().waitFor();
    await screenshot(page, '2-incident-detail');
    await page.goto(`${app.url}/admin/incidents`);
    await page.getByRole('table', { name: 'Incidents' }).waitFor();
    await screenshot(page, '2-incidents');
  });

  it('discovery: the trigger button starts a run and shows it until it ends', async () => {
    const before = Number((await db()('sre_discovery_runs').count({ n: '*' }).first())!.n);
    await page.goto(`${app.url}/admin/discovery`);
    await page.getByRole('button', { name: 'Run discovery now' }).click();
    const run = await eventually(async () => (await db()('sre_discovery_runs').where({ trigger: 'manual' }).whereNot({ status: 'running' }).first()) as { status: string } | undefined, 20_000);
    expect(Number((await db()('sre_discovery_runs').count({ n: '*' }).first())!.n)).toBe(before + 1);
    await page.getByRole('alert', { name: `Run ${run.status}` }).waitFor({ timeout: 5_000 });
    await page.getByRole('table', { name: 'Run history' }).getByText('manual').first().waitFor();
    await screenshot(page, '4-discovery');
  });

  it('cmdb: discovered entities listed; detail with relationships both ways and the neighbourhood graph', async () => {
    const listed = await api<{ items: Array<{ id: string; name: string }> }>('/api/v1/cmdb/entities?q=shop-web-1&type=container');
    expect(listed.items.length).toBe(1);
    await page.goto(`${app.url}/admin/cmdb?type=container`);
    await page.getByRole('link', { name: 'shop-web-1' }).click();
    await page.getByRole('table', { name: 'Relationships' }).getByRole('link', { name: 'shop' }).first().waitFor();
    await page.locator('.react-flow__node').first().waitFor();
    expect(await page.locator('.react-flow__node').count()).toBeGreaterThan(1);
    await screenshot(page, '3-cmdb-entity');
    await page.goto(`${app.url}/admin/cmdb`);
    await page.getByRole('table', { name: 'Entities' }).waitFor();
    // No Prometheus here: deploy-all's outcome is the API's problem, shown as its title and detail.
    await page.getByRole('button', { name: 'Deploy all monitors' }).click();
    await page.getByRole('alert').getByText('METRICS_URL is not configured: there is no Prometheus to deploy to.').waitFor();
    // …and what to install for npm run dev to start one.
    await page.getByRole('alert').getByText('apt-get install prometheus prometheus-alertmanager').waitFor();
    await screenshot(page, '3-cmdb');
  });

  it('runbooks: API data listed; the form stores matchers; bad input shows the field error and stores nothing', async () => {
    await api('/api/v1/runbooks', { method: 'POST', json: { name: 'Restart checkout', webhook_url: `${pager.url}/webhook/n8n`, auto_trigger: false } });
    await page.goto(`${app.url}/admin/runbooks`);
    await page.getByRole('link', { name: 'Restart checkout' }).waitFor();
    const count = async () => Number((await db()('sre_runbooks').count({ n: '*' }).first())!.n);
    const stored = await count();

    await page.getByRole('button', { name: 'New runbook' }).click();
    const dialog = page.getByRole('dialog', { name: 'New runbook' });
    await dialog.getByRole('button', { name: 'Add matcher' }).click();
    await dialog.getByLabel('Matcher 1 label').fill('service');
    await dialog.getByLabel('Matcher 1 operator').click();
    await page.getByRole('option', { name: '=~', exact: true }).click();
    await dialog.getByLabel('Matcher 1 value').fill('check(out');
    await dialog.getByLabel('Workflow webhook URL').fill(`${pager.url}/webhook/scale`);
    await dialog.getByRole('button', { name: 'Create runbook' }).click();
    // Empty name first: the API names body.name beside the field.
    await dialog.getByText('Too small: expected string to have >=1 characters').waitFor();
    await dialog.getByLabel('Name').fill('Scale checkout');
    await dialog.getByRole('button', { name: 'Create runbook' }).click();
    // The API's message for this field, beside the matcher's value (RE2 syntax, as Alertmanager).
    await dialog.getByText(/^is not an RE2 regular expression/).waitFor();
    await screenshot(page, '5-runbook-form-errors');
    expect(await count()).toBe(stored);

    await dialog.getByLabel('Matcher 1 value').fill('check(out|in)');
    await dialog.getByRole('button', { name: 'Create runbook' }).click();
    await page.getByRole('link', { name: 'Scale checkout' }).waitFor();
    const row = await db()('sre_runbooks').where({ name: 'Scale checkout' }).first();
    expect(row.matchers).toEqual([{ label: 'service', op: '=~', value: 'check(out|in)' }]);
    await screenshot(page, '5-runbooks');

    // Execute records the person; delete asks first.
    await page.getByRole('link', { name: 'Scale checkout' }).click();
    await page.getByRole('button', { name: 'Execute' }).click();
    const execution = await eventually(async () => (await db()('sre_runbook_executions').where({ runbook_id: row.id }).first()) as { triggered_by: string } | undefined);
    expect(execution.triggered_by).toBe(sreName);
    await page.getByRole('table', { name: 'Executions' }).getByText(`manual · ${sreName}`).waitFor();
    await screenshot(page, '5-runbook-detail');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Please confirm' }).getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(`${app.url}/admin/runbooks`);
    expect(await db()('sre_runbooks').where({ id: row.id }).first()).toBeUndefined();
  });

  it('home sends an SRE to the console; incident rules have their tab', async () => {
    await page.goto(`${app.url}/`);
    await page.waitForURL(`${app.url}/admin/alerts`);
    await page.getByRole('link', { name: 'Incidents' }).click();
    await page.getByRole('tab', { name: 'Incident rules' }).click();
    await page.waitForURL(/tab=rules/);
    await page.getByRole('button', { name: 'New rule' }).click();
    await page.getByRole('dialog', { name: 'New incident rule' }).getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('dialog').getByText('Too small: expected string to have >=1 characters').waitFor();
    await page.getByRole('dialog').getByLabel('Name').fill('Checkout errors');
    await page.getByRole('dialog').getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('table', { name: 'Incident rules' }).getByText('Checkout errors').waitFor();
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    await screenshot(page, '2-incident-rules');
  });

  it('narrow screen: the dashboard stays usable at 390 px', async () => {
    const narrow = await sre.newPage();
    await narrow.setViewportSize({ width: 390, height: 844 });
    await narrow.goto(`${app.url}/admin/alerts`);
    await narrow.getByRole('table', { name: 'Alerts' }).waitFor();
    await screenshot(narrow, '6-alerts-narrow');
    await narrow.getByRole('button', { name: 'Toggle navigation' }).click();
    await narrow.getByRole('link', { name: 'Incidents' }).click();
    await narrow.waitForURL(`${app.url}/admin/incidents`);
    await narrow.getByRole('table', { name: 'Incidents' }).waitFor();
    await screenshot(narrow, '6-incidents-narrow');
    await narrow.close();
  });

  it('a portal-only account is refused the console; without a session the console sends to sign-in', async () => {
    const anonymous = await browser.newContext();
    const anon = await anonymous.newPage();
    await anon.goto(`${app.url}/admin/incidents?status=open`);
    await anon.getByLabel('Username').waitFor();
    expect(new URL(anon.url()).origin).toBe(new URL(idp.provider.issuer).origin);
    await anonymous.close();

    const portal = await browser.newContext();
    const user = await signInAt(portal, app.url, '/portal', 'user');
    await user.getByRole('heading', { name: `Hello, ${devAccounts.user.name}` }).waitFor();
    await user.goto(`${app.url}/`);
    await user.waitForURL(`${app.url}/portal`);
    const res = await user.goto(`${app.url}/admin/alerts`);
    expect(res?.status()).toBe(403);
    await user.getByText('This page needs the sre role').waitFor();
    await screenshot(user, '7-portal-user-403');
    expect(await user.evaluate(() => fetch('/api/v1/alerts').then((r) => r.status))).toBe(403);
    await portal.close();
  });
});
