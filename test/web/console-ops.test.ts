/**
 * The console's operations in real Chromium: silences, incident edits and reopening, manual CMDB
 * entities and relationships, monitors, and deleting a discovery source. What the browser does is
 * checked in Postgres; each new screen and state is screenshotted into test-results/screens/.
 */
// needs: chromium prometheus
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { firing } from '../sre/alerting-helpers.js';
import { eventually } from '../helpers/eventually.js';
import { dockerApiServer, startPrometheus } from '../sre/discovery-servers.js';
import { startLocalGitLab } from '../helpers/local-gitlab-server.js';
import { launchBrowser, screenshot, signInAt } from '../helpers/browser.js';
import { devAccounts, startIdentity } from '../helpers/identity.js';

const dockerState: Parameters<typeof dockerApiServer>[0] = {
  containers: [
    {
      Id: 'shop-web-1-0123456789abcdef',
      Names: ['/shop-web-1'],
      Image: 'example/shop-web:1',
      State: 'running',
      Status: 'Up 5 minutes (healthy)',
      Labels: { 'com.docker.compose.project': 'shop', 'com.docker.compose.service': 'web', 'com.docker.compose.oneoff': 'False' },
      Ports: [{ PrivatePort: 80, Type: 'tcp' }],
      NetworkSettings: { Networks: { shop_default: { IPAddress: '172.20.0.2', Aliases: null } } },
    },
  ],
};
const dockerApi = await dockerApiServer(dockerState);
// A real Prometheus for deploying monitors; the local GitLab stands in for the incident tracker.
const prometheus = await startPrometheus({});
const gitlab = await startLocalGitLab({ token: 'glpat-console-ops' });
const dockerAddress = `tcp://127.0.0.1:${dockerApi.port}`;
Object.assign(process.env, {
  CONTAINER_RUNTIME_HOST: dockerAddress,
  DISCOVERY_ENABLED: 'false',
  // Template recommendations of new entities become monitors, so the monitors screen has some.
  MONITORS_AUTO_APPLY: 'true',
  MONITORS_MODEL_AUTO: 'false',
  METRICS_URL: prometheus.url,
  RULES_DIR: prometheus.rulesDir,
  ISSUE_TRACKER_URL: gitlab.url,
  ISSUE_TRACKER_TOKEN: 'glpat-console-ops',
  ISSUE_TRACKER_PROJECT_ID: '42',
});
afterAll(() => Promise.all([dockerApi.close(), prometheus.stop(), gitlab.close()]));

const idp = await startIdentity();
const { startPlatform } = await import('../helpers/platform.js');
const { db } = await import('../../shared/db/index.js');
const app = await startPlatform({ port: idp.appPort });
const browser = await launchBrowser();
const sreName = devAccounts.sre.name;

const api = async <T = any>(path: string, init?: Parameters<typeof app.request>[1]) => {
  const res = await app.request(path, init);
  expect(res.status, `${path}: ${res.status}`).toBeLessThan(300);
  return (res.status === 204 ? undefined : await res.json()) as T;
};
/** The neighbourhood graph's node labels that lie wholly inside its box, or false while any does not. */
async function graphInView(): Promise<string[] | false> {
  const graph = page.getByRole('img', { name: 'Neighbourhood graph' });
  const box = (await graph.boundingBox())!;
  const nodes = await graph.locator('.react-flow__node').all();
  const inside = await Promise.all(
    nodes.map(async (n) => {
      const b = await n.boundingBox();
      return !!b && b.x >= box.x && b.y >= box.y && b.x + b.width <= box.x + box.width && b.y + b.height <= box.y + box.height;
    }),
  );
  return inside.every(Boolean) && (await Promise.all(nodes.map((n) => n.innerText()))).map((t) => t.split('\n')[0]!).sort();
}
const confirm = (label: string) => page.getByRole('dialog', { name: 'Please confirm' }).getByRole('button', { name: label }).click();

let sre: BrowserContext;
let page: Page;

beforeAll(async () => {
  const { run_id } = await api<{ run_id: string }>('/api/v1/cmdb/discovery/trigger', { method: 'POST' });
  await eventually(async () => (await api<{ status: string }>(`/api/v1/cmdb/discovery/runs/${run_id}`)).status === 'succeeded', 20_000, 'discovery run');
  sre = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await signInAt(sre, app.url, '/admin/silences', 'sre');
  // A step that does not happen fails with its locator rather than the test's timeout.
  page.setDefaultTimeout(15_000);
}, 120_000);

describe('console operations in Chromium', { timeout: 150_000 }, () => {
  it('silences: create one in the browser; a matching alert shows as silenced and opens no incident; end it early', async () => {
    await page.getByRole('link', { name: 'Silences' }).waitFor();
    await page.getByText('No silences in these states.').waitFor();
    await page.getByRole('button', { name: 'New silence' }).click();
    const dialog = page.getByRole('dialog', { name: 'New silence' });
    expect(await dialog.getByLabel('Author').inputValue()).toBe(sreName);
    expect(await dialog.getByLabel('Matcher 1 label').inputValue()).toBe('alertname');
    await dialog.getByLabel('Matcher 1 value').fill('QuietOne');
    await dialog.getByRole('button', { name: 'Add matcher' }).click();
    await dialog.getByLabel('Matcher 2 label').fill('env');
    await dialog.getByLabel('Matcher 2 operator').click();
    await page.getByRole('option', { name: '=~', exact: true }).click();
    await dialog.getByLabel('Matcher 2 value').fill('prod|staging');
    // No comment first: the API names the field beside it and nothing is stored.
    await dialog.getByRole('button', { name: 'Create silence' }).click();
    await dialog.getByText('is required').waitFor();
    await screenshot(page, 'ops-1-silence-form-error');
    expect(Number((await db()('sre_silences').count({ n: '*' }).first())!.n)).toBe(0);
    await dialog.getByLabel('Comment').fill('planned maintenance of the quiet service');
    await dialog.getByRole('button', { name: 'Create silence' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const silence = await db()('sre_silences').first();
    expect(silence).toMatchObject({ created_by: sreName, comment: 'planned maintenance of the quiet service' });
    expect(silence.matchers).toEqual([
      { label: 'alertname', op: '=', value: 'QuietOne' },
      { label: 'env', op: '=~', value: 'prod|staging' },
    ]);
    // Two hours from about now (the form's default duration).
    expect(Math.abs(new Date(silence.ends_at).getTime() - new Date(silence.starts_at).getTime() - 7_200_000)).toBeLessThan(60_000);
    const table = page.getByRole('table', { name: 'Silences' });
    await table.getByText('env=~"prod|staging"').waitFor();
    await table.getByText('active').waitFor();
    await screenshot(page, 'ops-1-silences');

    const posted = await app.request('/webhooks/alertmanager/default', { method: 'POST', json: firing('QuietOne', { env: 'prod', severity: 'critical' }), auth: false });
    expect(posted.status, await posted.text()).toBeLessThan(300);
    await page.getByRole('link', { name: 'Alerts' }).click();
    await page.getByLabel('QuietOne is silenced').waitFor({ timeout: 15_000 });
    await screenshot(page, 'ops-1-alerts-silenced');
    const alert = await db()('sre_alert_instances').where({ alertname: 'QuietOne' }).first();
    expect(alert.incident_id).toBeNull();

    // The detail says so and offers a silence prefilled with the alert's labels.
    await page.getByRole('link', { name: 'QuietOne' }).click();
    await page.getByText('An active silence matches this alert').waitFor();
    await screenshot(page, 'ops-1-alert-detail-silenced');
    await page.getByRole('link', { name: 'Silence alerts like this' }).click();
    const prefilled = page.getByRole('dialog', { name: 'New silence' });
    await prefilled.waitFor();
    const labels = await Promise.all(Object.keys(alert.labels).map((_, i) => prefilled.getByLabel(`Matcher ${i + 1} label`).inputValue()));
    expect([...labels].sort()).toEqual(Object.keys(alert.labels).sort());
    expect(await prefilled.getByLabel(`Matcher ${labels.indexOf('env') + 1} value`).inputValue()).toBe('prod');
    await screenshot(page, 'ops-1-silence-prefilled');
    await prefilled.getByRole('button', { name: 'Cancel' }).click();
    await prefilled.waitFor({ state: 'hidden' });
    expect(new URL(page.url()).search).toBe('');

    await page.getByRole('button', { name: `End silence ${silence.id}` }).click();
    await confirm('End silence');
    await page.getByText('No silences in these states.').waitFor();
    const ended = await db()('sre_silences').where({ id: silence.id }).first();
    expect(ended.ended_by).toBe(sreName);
    expect(new Date(ended.ends_at).getTime()).toBeLessThanOrEqual(Date.now());
    await page.getByRole('combobox', { name: 'State' }).click({ force: true });
    await page.getByRole('option', { name: 'expired' }).click();
    await page.keyboard.press('Escape');
    await page.getByRole('table', { name: 'Silences' }).getByText(`ended by ${sreName}`).waitFor();
    await screenshot(page, 'ops-1-silences-expired');
    const narrow = await sre.newPage();
    await narrow.setViewportSize({ width: 390, height: 844 });
    await narrow.goto(`${app.url}/admin/silences?state=expired`);
    await narrow.getByRole('table', { name: 'Silences' }).getByText('expired').waitFor();
    await screenshot(narrow, 'ops-1-silences-narrow');
    await narrow.close();
    await page.goto(`${app.url}/admin/alerts?silenced=false`);
    await page.getByRole('link', { name: 'QuietOne' }).waitFor();
    expect(await page.getByLabel('QuietOne is silenced').count()).toBe(0);
  });

  it('incidents: title, severity and assignee edited in the browser are timeline entries; resolve then reopen, in step with the tracker issue', async () => {
    const incident = await api<{ id: string }>('/api/v1/incidents', { method: 'POST', json: { title: 'Checkout is slow', severity: 'warning', by: 'api-test' } });
    const issue = await eventually(async () => {
      const { issue } = await api<{ issue: { web_url: string | null; iid: number } }>(`/api/v1/incidents/${incident.id}`);
      return issue.web_url ? issue : undefined;
    }, 10_000, 'tracker issue created');
    const trackerIssue = () => gitlab.issues.find((i) => i.iid === issue.iid)!;
    await page.goto(`${app.url}/admin/incidents/${incident.id}`);
    expect(await page.getByRole('link', { name: 'Tracker issue' }).getAttribute('href')).toBe(issue.web_url);
    await page.getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit incident' });
    await dialog.getByLabel('Title').fill('Checkout is very slow');
    await dialog.getByLabel('Severity').fill('critical');
    await dialog.getByLabel('Assignee').fill('oncall@example.com');
    await screenshot(page, 'ops-2-incident-edit');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('heading', { name: 'Checkout is very slow' }).waitFor();
    const timeline = page.getByLabel('Timeline');
    await timeline.getByText('title: Checkout is slow → Checkout is very slow').waitFor();
    await timeline.getByText('severity: warning → critical').waitFor();
    await timeline.getByText('assignee: (none) → oncall@example.com').waitFor();
    const updated = await db()('sre_incident_timeline').where({ incident_id: incident.id, kind: 'updated' });
    expect(updated.map((r) => [r.data.field, r.actor]).sort()).toEqual([
      ['assignee', sreName],
      ['severity', sreName],
      ['title', sreName],
    ]);
    expect(await db()('sre_incidents').where({ id: incident.id }).first()).toMatchObject({ title: 'Checkout is very slow', severity: 'critical', assignee: 'oncall@example.com' });

    await page.getByRole('button', { name: 'Resolve' }).click();
    await confirm('Resolve');
    await eventually(async () => trackerIssue().state === 'closed', 10_000, 'tracker issue closed');
    await page.getByRole('button', { name: 'Reopen' }).click();
    await confirm('Reopen');
    await eventually(async () => (await db()('sre_incidents').where({ id: incident.id }).first()).status === 'open');
    await eventually(async () => trackerIssue().state === 'opened', 10_000, 'tracker issue reopened');
    await page.getByRole('button', { name: 'Acknowledge' }).waitFor();
    const moves = await db()('sre_incident_timeline').where({ incident_id: incident.id, kind: 'status_changed' }).orderBy('at');
    expect(moves.map((m) => [m.data.to, m.actor])).toEqual([
      ['resolved', sreName],
      ['open', sreName],
    ]);
    await screenshot(page, 'ops-2-incident-reopened');
    await page.getByRole('link', { name: 'Incidents' }).first().click();
    await page.getByRole('table', { name: 'Incidents' }).getByRole('row').filter({ hasText: 'Checkout is very slow' }).getByText('oncall@example.com').waitFor();
  });

  it('cmdb: a manual entity and a relationship are created, edited and deleted; a discovered entity is read-only', async () => {
    await page.goto(`${app.url}/admin/cmdb`);
    await page.getByRole('button', { name: 'New entity' }).click();
    const dialog = page.getByRole('dialog', { name: 'New entity' });
    await dialog.getByRole('combobox', { name: 'Type' }).click();
    await page.getByRole('option', { name: 'hostname' }).click();
    await dialog.getByLabel('Name').fill('billing.example.com');
    await dialog.getByLabel('Attributes').fill('{"owner": billing}');
    await dialog.getByRole('button', { name: 'Create entity' }).click();
    await dialog.getByText('is not valid JSON').waitFor();
    await screenshot(page, 'ops-3-entity-form-error');
    await dialog.getByLabel('Attributes').fill('{"owner": "billing"}');
    await dialog.getByRole('button', { name: 'Create entity' }).click();
    await page.getByRole('heading', { name: 'billing.example.com', exact: true }).waitFor();
    const entity = await db()('sre_entities').where({ name: 'billing.example.com' }).first();
    expect(entity).toMatchObject({ type: 'hostname', source_id: null, natural_key: 'billing.example.com', attributes: { owner: 'billing' } });
    await page.waitForURL(`${app.url}/admin/cmdb/${entity.id}`);

    await page.getByRole('button', { name: 'Add relationship' }).click();
    const rel = page.getByRole('dialog', { name: 'New relationship' });
    await rel.getByLabel('Other entity').fill('shop-web');
    await page.getByRole('option', { name: /^shop-web-1 \(container/ }).click();
    await rel.getByRole('button', { name: 'Add relationship' }).click();
    await rel.waitFor({ state: 'hidden' });
    const relationships = page.getByRole('table', { name: 'Relationships' });
    await relationships.getByRole('link', { name: 'shop-web-1' }).waitFor();
    const shopWeb = await db()('sre_entities').where({ name: 'shop-web-1', type: 'container' }).first();
    const stored = await db()('sre_relationships').where({ from_entity_id: entity.id }).first();
    expect(stored).toMatchObject({ to_entity_id: shopWeb.id, type: 'depends_on' });
    // The graph fits its view again once the relationship brings a second node.
    const inView = await eventually(async () => {
      const names = await graphInView();
      return names && names.length === 2 && names;
    }, 5_000, 'both graph nodes in view');
    expect(inView).toEqual(['billing.example.com', 'shop-web-1']);
    await screenshot(page, 'ops-3-graph-after-relationship');

    await relationships.getByLabel('Type of the relationship with shop-web-1').click();
    await page.getByRole('option', { name: 'routes_to' }).click();
    await eventually(async () => (await db()('sre_relationships').where({ id: stored.id }).first()).type === 'routes_to');

    await page.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit billing.example.com' });
    await edit.getByLabel('Name').fill('billing-api.example.com');
    await edit.getByRole('combobox', { name: 'Health' }).click();
    await page.getByRole('option', { name: 'degraded' }).click();
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'billing-api.example.com', exact: true }).waitFor();
    expect(await db()('sre_entities').where({ id: entity.id }).first()).toMatchObject({ name: 'billing-api.example.com', health: 'degraded', attributes: { owner: 'billing' } });
    await screenshot(page, 'ops-3-manual-entity');

    await relationships.getByRole('button', { name: 'Delete the relationship with shop-web-1' }).click();
    await confirm('Delete');
    await relationships.getByRole('link', { name: 'shop-web-1' }).waitFor({ state: 'detached' });
    expect(await db()('sre_relationships').where({ id: stored.id }).first()).toBeUndefined();

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await confirm('Delete');
    await page.waitForURL(`${app.url}/admin/cmdb`);
    expect(await db()('sre_entities').where({ id: entity.id }).first()).toBeUndefined();

    await page.goto(`${app.url}/admin/cmdb/${shopWeb.id}`);
    await page.getByRole('alert', { name: 'Discovered entity: read-only here' }).waitFor();
    expect(await page.getByRole('button', { name: 'Edit' }).count()).toBe(0);
    await screenshot(page, 'ops-3-discovered-entity');
  });

  it('monitors: listed with their entity; disabled and removed in the browser', async () => {
    const container = await db()('sre_entities').where({ name: 'shop-web-1', type: 'container' }).first();
    const monitors = await api<{ items: Array<{ id: string; alert: string; status: string }> }>(`/api/v1/cmdb/monitors?entity_id=${container.id}`);
    expect(monitors.items.length).toBeGreaterThan(1);
    const [first, second] = monitors.items as [(typeof monitors.items)[number], (typeof monitors.items)[number]];
    await page.goto(`${app.url}/admin/cmdb`);
    await page.getByRole('link', { name: 'Monitors' }).click();
    const table = page.getByRole('table', { name: 'Monitors' });
    await table.getByText(first.alert).first().waitFor();
    await table.getByRole('link', { name: 'shop-web-1' }).first().waitFor();
    await screenshot(page, 'ops-4-monitors');

    await table.getByLabel(`Enable monitor ${first.alert}`).first().click({ force: true });
    await eventually(async () => (await db()('sre_entity_monitors').where({ id: first.id }).first()).status === 'disabled');
    await page.getByRole('combobox', { name: 'Status' }).click();
    await page.getByRole('option', { name: 'disabled' }).click();
    await page.waitForURL(/status=disabled/);
    await expect.poll(() => table.getByRole('row').count()).toBe(2);
    await table.getByText(first.alert).waitFor();
    await screenshot(page, 'ops-4-monitors-disabled');

    await page.goto(`${app.url}/admin/monitors`);
    const row = table.getByRole('row').filter({ has: page.getByText(second.alert, { exact: true }) }).first();
    await row.getByRole('button', { name: 'Remove' }).click();
    await confirm('Remove');
    await eventually(async () => (await db()('sre_entity_monitors').where({ id: second.id }).first()) === undefined);

    // Deployed to the real Prometheus; the disabled one stays out.
    await page.getByRole('button', { name: 'Deploy all monitors' }).click();
    const deployed = page.getByRole('alert', { name: 'Deployed' });
    await deployed.waitFor({ timeout: 60_000 });
    const live = Number((await db()('sre_entity_monitors').whereNot({ status: 'disabled' }).count({ n: '*' }).first())!.n);
    await deployed.getByText(`${live} monitors deployed; ${live} in`).waitFor();
    await deployed.getByText('0 monitors of stale entities taken out').waitFor();

    // The container goes away: its monitors (and its project's) leave at the next deploy, which says how many.
    dockerState.containers = [];
    const { run_id } = await api<{ run_id: string }>('/api/v1/cmdb/discovery/trigger', { method: 'POST' });
    await eventually(async () => (await api<{ status: string }>(`/api/v1/cmdb/discovery/runs/${run_id}`)).status !== 'running', 20_000, 'discovery run');
    expect((await db()('sre_entities').where({ id: container.id }).first()).stale).toBe(true);
    const ofStale = Number((await db()('sre_entity_monitors as m').join('sre_entities as e', 'e.id', 'm.entity_id').where('e.stale', true).count({ n: '*' }).first())!.n);
    expect(ofStale).toBeGreaterThan(1);
    await page.reload();
    await page.getByRole('button', { name: 'Deploy all monitors' }).click();
    await page.getByRole('alert', { name: 'Deployed' }).getByText(`${ofStale} monitors of stale entities taken out`).waitFor({ timeout: 60_000 });
    // Counted by what is left of the stale entities, not by a total: the discovery run's new entities may still be getting their own monitors.
    const staleLeft = Number((await db()('sre_entity_monitors as m').join('sre_entities as e', 'e.id', 'm.entity_id').where('e.stale', true).count({ n: '*' }).first())!.n);
    expect(staleLeft).toBe(0);
    await screenshot(page, 'ops-4-monitors-deployed');
  });

  it('discovery: a source is deleted after confirming; not while a run is in progress (even one started after the page loaded); a configured one offers no delete', async () => {
    const source = await api<{ id: string }>('/api/v1/cmdb/discovery/sources', { method: 'POST', json: { name: 'lab-docker', kind: 'docker', address: dockerAddress, enabled: false } });
    // A run in progress (as a worker holds it): deleting waits for it.
    const [run] = await db()('sre_discovery_runs').insert({ trigger: 'manual', status: 'running' }).returning('id');
    await page.goto(`${app.url}/admin/discovery`);
    await page.getByRole('alert', { name: 'A discovery run is in progress' }).waitFor();
    expect(await page.getByRole('button', { name: 'Delete source lab-docker' }).isDisabled()).toBe(true);
    await screenshot(page, 'ops-5-discovery-run-in-progress');
    await db()('sre_discovery_runs').where({ id: run.id }).update({ status: 'failed', finished_at: new Date() });
    await page.reload();
    await page.getByLabel('Source lab-docker', { exact: true }).waitFor();
    expect(await page.getByRole('alert', { name: 'A discovery run is in progress' }).count()).toBe(0);

    // A configured source is re-seeded at every run: it is marked, and no Delete is offered.
    const configured = page.getByLabel('Source docker', { exact: true });
    await configured.getByText('From configuration').waitFor();
    expect(await page.getByRole('button', { name: 'Delete source docker' }).count()).toBe(0);
    await screenshot(page, 'ops-5-discovery-configured-source');

    // A run that starts after the page loaded: the server refuses, naming the run, and the page catches up.
    const [late] = await db()('sre_discovery_runs').insert({ trigger: 'manual', status: 'running' }).returning('id');
    await page.getByRole('button', { name: 'Delete source lab-docker' }).click();
    await confirm('Delete source');
    await page.getByRole('alert').getByText(`Discovery run ${late.id} is in progress`, { exact: false }).waitFor();
    await page.getByRole('alert', { name: 'A discovery run is in progress' }).waitFor();
    expect(await db()('sre_discovery_sources').where({ id: source.id }).first()).toBeDefined();
    await screenshot(page, 'ops-5-discovery-delete-refused-mid-run');
    await db()('sre_discovery_runs').where({ id: late.id }).update({ status: 'failed', finished_at: new Date() });
    await page.reload();
    await page.getByLabel('Source lab-docker', { exact: true }).waitFor();

    await page.getByRole('button', { name: 'Delete source lab-docker' }).click();
    await confirm('Delete source');
    await page.getByLabel('Source lab-docker', { exact: true }).waitFor({ state: 'detached' });
    expect(await db()('sre_discovery_sources').where({ id: source.id }).first()).toBeUndefined();
    expect(await db()('sre_discovery_sources').where({ name: 'docker' }).first()).toBeDefined();
    await screenshot(page, 'ops-5-discovery');
  });
});
