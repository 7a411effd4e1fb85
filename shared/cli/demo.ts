/**
 * Demo data for `npm run dev -- --demo`: a realistic, clearly marked sample across the three services,
 * written through the platform's own API and webhooks (so it exercises the real paths: queues,
 * workers, dedup, the lifecycle rules). Everything carries a demo mark: emails and domains under
 * `demo.example`, `demo: true` labels on alerts and incidents, "(demo)" in titles and names.
 *
 * Idempotent by section: each section first asks the API whether its marked rows exist and skips
 * itself when they do, so a second run adds nothing. Never against production (refused).
 */
export interface DemoTarget {
  /** Base URL of a running platform (web role). */
  baseUrl: string;
  /** An API key it accepts. */
  apiKey: string;
  /** NODE_ENV of the platform; production is refused. */
  nodeEnv?: string;
  log?: (line: string) => void;
}

/** What each section did: `created` counts the rows it wrote, `skipped` says it found its rows. */
export type DemoReport = Record<string, { created: number; skipped: boolean }>;

const demoDomain = 'demo.example';

class DemoApi {
  constructor(readonly target: DemoTarget) {}

  async call<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, ok: number[] = []): Promise<T> {
    const res = await fetch(this.target.baseUrl + path, {
      method,
      headers: { 'X-API-Key': this.target.apiKey, 'X-Actor': 'demo', ...(body !== undefined && !(body instanceof FormData) ? { 'Content-Type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok && !ok.includes(res.status)) throw new Error(`demo: ${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  get = <T = any>(path: string, headers?: Record<string, string>) => this.call<T>('GET', path, undefined, headers);
  post = <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => this.call<T>('POST', path, body ?? {}, headers);
  patch = <T = any>(path: string, body: unknown) => this.call<T>('PATCH', path, body);
}

const people = [
  { name: 'Maya Chen', phone: '+15550100001', channels: ['whatsapp', 'web', 'voice'] },
  { name: 'Jonas Berg', phone: '+15550100002', channels: ['web', 'email'] },
  { name: 'Priya Nair', phone: '+15550100003', channels: ['whatsapp', 'voice'] },
  { name: 'Tomás Ortega', phone: '+15550100004', channels: ['sms', 'web'] },
];

const conversation = [
  ['user', 'Hi, my last invoice looks twice as high as usual.'],
  ['assistant', 'Let me check that for you. I can see two charges on 3 November; one of them is a duplicate.'],
  ['user', 'Can you refund the duplicate?'],
  ['assistant', 'Done: the refund is on its way and should show within 3 business days. Anything else?'],
];

async function seedPeople(api: DemoApi): Promise<number> {
  let created = 0;
  for (const p of people) {
    const user = await api.post<{ user_id: string }>('/api/users', { phone_number: p.phone, display_name: `${p.name} (demo)`, email: `${p.name.split(' ')[0]!.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase()}@${demoDomain}` });
    created++;
    const session = await api.post<{ session_id: string }>('/api/sessions/resolve', { user_id: user.user_id });
    for (const [i, channel] of p.channels.entries()) {
      const interaction = await api.post<{ interaction_id: string }>(`/api/sessions/${session.session_id}/interactions`, { channel, metadata: { demo: true } });
      // Each channel carries part of one conversation, as a person moving between channels would.
      for (const [role, content] of conversation.slice(i, i + 2)) {
        await api.post(`/api/sessions/${session.session_id}/messages`, { channel, role, content, interaction_id: interaction.interaction_id });
        created++;
      }
      if (i < p.channels.length - 1) await api.post(`/api/sessions/interactions/${interaction.interaction_id}/close`, {});
    }
  }
  return created;
}

const leadSeeds = [
  { first_name: 'Olivia', last_name: 'Martin', company: 'Northwind Traders', title: 'Head of Operations', source: 'website', estimated_value: '24000', status: 'new' },
  { first_name: 'Liam', last_name: 'Dubois', company: 'Contoso Pharma', title: 'IT Director', source: 'linkedin', estimated_value: '58000', status: 'new' },
  { first_name: 'Sofia', last_name: 'Rossi', company: 'Fabrikam Logistics', title: 'COO', source: 'referral', estimated_value: '91000', status: 'contacted' },
  { first_name: 'Noah', last_name: 'Schmidt', company: 'Tailspin Toys', title: 'Founder', source: 'trade_show', estimated_value: '12000', status: 'contacted' },
  { first_name: 'Amara', last_name: 'Okafor', company: 'Woodgrove Bank', title: 'VP Customer Experience', source: 'webinar', estimated_value: '140000', status: 'qualified' },
  { first_name: 'Kenji', last_name: 'Watanabe', company: 'Litware Inc', title: 'CTO', source: 'email_campaign', estimated_value: '36000', status: 'qualified' },
  { first_name: 'Elena', last_name: 'Petrova', company: 'Adventure Works', title: 'Procurement', source: 'cold_call', estimated_value: '8000', status: 'unqualified' },
  { first_name: 'Lucas', last_name: 'Silva', company: 'Proseware', title: 'Head of Support', source: 'social_media', estimated_value: '47000', status: 'converted' },
  { first_name: 'Hannah', last_name: 'Kowalski', company: 'Blue Yonder Airlines', title: 'Digital Lead', source: 'website', estimated_value: '76000', status: 'converted' },
] as const;

const path: Record<string, string[]> = {
  new: [],
  contacted: ['contacted'],
  qualified: ['contacted', 'qualified'],
  unqualified: ['contacted', 'unqualified'],
  converted: ['contacted', 'qualified'],
};

async function seedLeads(api: DemoApi): Promise<number> {
  // Each company its own domain (conversion links accounts by the work email's domain).
  const emailOf = (l: { first_name: string; last_name: string; company: string }) => `${l.first_name.toLowerCase()}.${l.last_name.toLowerCase()}@${l.company.toLowerCase().replace(/[^a-z]+/g, '-')}.${demoDomain}`;
  // Through the public batch webhook, as a form provider would send them.
  const batch = await api.post<{ results: Array<{ index: number; lead_id: string }> }>(
    '/api/v1/webhooks/leads/batch',
    // The company carries the mark, so the accounts and opportunities that converting a lead names after it carry it too.
    { leads: leadSeeds.map(({ status: _s, ...l }) => ({ ...l, company: `${l.company} (demo)`, email: emailOf(l), source_detail: 'demo data', notes: 'Demo lead', custom_data: { demo: true } })) },
    { 'webhook-id': 'demo-leads-v1' },
  );
  let created = batch.results.length;
  for (const { index, lead_id } of batch.results) {
    const seed = leadSeeds[index]!;
    for (const status of path[seed.status]!) await api.patch(`/api/v1/leads/${lead_id}`, { status });
    if (seed.status === 'converted') {
      await api.post(`/api/v1/leads/${lead_id}/convert`, { create_account: true, close_date: '2027-02-26' });
      created += 2;
    }
  }
  // One form sent twice: the second delivery is a resubmission in the lead's history.
  await api.post('/api/v1/webhooks/leads', { first_name: 'Olivia', last_name: 'Martin', email: emailOf(leadSeeds[0]), phone: '+1 555 0100 777', source: 'linkedin', source_detail: 'demo ad' });
  return created;
}

const accountSeeds = [
  { name: 'Globex Corporation (demo)', domain: `globex.${demoDomain}`, industry: 'Manufacturing', segment: 'Enterprise' },
  { name: 'Initech (demo)', domain: `initech.${demoDomain}`, industry: 'Software', segment: 'Mid-Market' },
  { name: 'Umbrella Health (demo)', domain: `umbrella.${demoDomain}`, industry: 'Healthcare', segment: 'Enterprise' },
  { name: 'Soylent Foods (demo)', domain: `soylent.${demoDomain}`, industry: 'Food & Beverage', segment: 'SMB' },
];

const opportunitySeeds: Array<[number, string, string, number, string]> = [
  [0, 'Globex – plant monitoring', 'Lead', 42000, '2027-04-30'],
  [0, 'Globex – support desk', 'Negotiation', 128000, '2027-01-31'],
  [1, 'Initech – TPS automation', 'Discovery', 18500, '2027-03-15'],
  [1, 'Initech – renewal', 'Closed Won', 26000, '2026-10-31'],
  [2, 'Umbrella – patient messaging', 'Proposal', 230000, '2027-02-28'],
  [2, 'Umbrella – pilot', 'Closed Lost', 15000, '2026-09-30'],
  [3, 'Soylent – web chat', 'Proposal', 9600, '2027-01-15'],
  [3, 'Soylent – voice line', 'Lead', 5400, '2027-05-31'],
];

async function seedAccounts(api: DemoApi): Promise<number> {
  const ids: string[] = [];
  for (const a of accountSeeds) ids.push((await api.post<{ id: string }>('/api/v1/accounts', a)).id);
  for (const [i, name, stage, amount, close_date] of opportunitySeeds) {
    await api.post('/api/v1/opportunities', { name: `${name} (demo)`, account_id: ids[i], stage: 'Lead', amount, close_date });
    if (stage !== 'Lead') {
      const [o] = (await api.get<{ data: Array<{ id: string }> }>(`/api/v1/opportunities?q=${encodeURIComponent(`${name} (demo)`)}`)).data;
      await api.patch(`/api/v1/opportunities/${o!.id}`, { stage });
    }
  }
  return ids.length + opportunitySeeds.length;
}

const alert = (status: 'firing' | 'resolved', name: string, severity: string, service: string, summary: string, startsAt: string, endsAt?: string) => ({
  status,
  labels: { alertname: name, severity, service, instance: `${service}-1.${demoDomain}:9100`, demo: 'true' },
  annotations: { summary: `${summary} (demo)`, runbook_url: `https://wiki.${demoDomain}/runbooks/${name}` },
  startsAt,
  endsAt: endsAt ?? '0001-01-01T00:00:00Z',
  generatorURL: `http://prometheus.${demoDomain}/graph?g0.expr=${name}`,
});

/** Waits (up to 30 s) until the workers have stored at least `count` demo alerts. */
async function alertsStored(api: DemoApi, count: number): Promise<void> {
  for (let waited = 0; waited < 30_000; waited += 250) {
    if ((await api.get<{ total: number }>('/api/v1/alerts?label=demo%3Dtrue&limit=1')).total >= count) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function seedAlerts(api: DemoApi): Promise<number> {
  const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
  const am = (status: 'firing' | 'resolved', alerts: unknown[]) => ({ version: '4', receiver: 'switchboard', status, groupLabels: {}, commonLabels: { demo: 'true' }, commonAnnotations: {}, externalURL: `http://alertmanager.${demoDomain}`, groupKey: `{}:{demo="${status}"}`, truncatedAlerts: 0, alerts });
  // Two sources of the two kinds the platform ingests; a source that exists already is kept (409).
  await api.call('POST', '/api/v1/alerts/sources', { kind: 'alertmanager', name: 'demo-prometheus' }, {}, [409]);
  await api.call('POST', '/api/v1/alerts/sources', { kind: 'grafana', name: 'demo-grafana' }, {}, [409]);
  const firing = [
    alert('firing', 'HighErrorRate', 'critical', 'checkout', 'Checkout 5xx above 5 % for 10 minutes', ago(25)),
    alert('firing', 'DiskAlmostFull', 'warning', 'postgres', 'Data volume 91 % full', ago(90)),
    alert('firing', 'SlowResponses', 'warning', 'search', 'p95 latency above 800 ms', ago(12)),
  ];
  await api.post('/webhooks/alertmanager/demo-prometheus', am('firing', firing));
  const resolvedOne = alert('firing', 'PodRestarting', 'warning', 'payments', 'Pod restarted 4 times in 15 minutes', ago(180));
  await api.post('/webhooks/alertmanager/demo-prometheus', am('firing', [resolvedOne]));
  // As a real sender does, the resolution follows the firing it resolves (sent at once, the two could be ingested in either order).
  await alertsStored(api, firing.length + 1);
  await api.post('/webhooks/alertmanager/demo-prometheus', am('resolved', [{ ...resolvedOne, status: 'resolved', endsAt: ago(150) }]));
  // A second source, in Grafana's unified alerting format.
  const grafana = (status: 'firing' | 'resolved', alerts: unknown[]) => ({
    receiver: 'switchboard', status, orgId: 1, groupLabels: {}, commonLabels: { demo: 'true' }, commonAnnotations: {}, externalURL: `http://grafana.${demoDomain}`, version: '1',
    groupKey: `{}:{demo="grafana-${status}"}`, truncatedAlerts: 0, title: `[${status.toUpperCase()}] demo`, state: status === 'firing' ? 'alerting' : 'ok', message: 'demo', alerts,
  });
  const gFiring = { ...alert('firing', 'QueueBacklog', 'critical', 'workers', 'Jobs waiting for more than 5 minutes', ago(8)), fingerprint: 'de0000000000d001', silenceURL: '', dashboardURL: '', panelURL: '', values: { B: 1240 } };
  const gResolved = { ...alert('firing', 'CertificateExpiring', 'info', 'edge', 'TLS certificate expires in 14 days', ago(600)), fingerprint: 'de0000000000d002', silenceURL: '', dashboardURL: '', panelURL: '', values: { B: 14 } };
  await api.post('/webhooks/grafana/demo-grafana', grafana('firing', [gFiring, gResolved]));
  await alertsStored(api, firing.length + 3);
  await api.post('/webhooks/grafana/demo-grafana', grafana('resolved', [{ ...gResolved, status: 'resolved', endsAt: ago(30) }]));
  // Ingestion runs on the workers; waiting for it keeps the section's "already there" check true on the next run.
  const expected = firing.length + 3; // and two of them resolved
  for (let waited = 0; waited < 30_000; waited += 250) {
    const all = await api.get<{ total: number }>('/api/v1/alerts?label=demo%3Dtrue&limit=1');
    const resolved = await api.get<{ total: number }>('/api/v1/alerts?label=demo%3Dtrue&status=resolved&limit=1');
    if (all.total >= expected && resolved.total >= 2) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return expected;
}

async function seedIncidents(api: DemoApi): Promise<number> {
  const a = await api.post<{ id: string }>('/api/v1/incidents', { title: 'Checkout errors after deploy (demo)', description: 'Error rate rose right after release 2026.11.3.', severity: 'critical', labels: { demo: 'true', service: 'checkout' }, by: 'demo' });
  await api.post(`/api/v1/incidents/${a.id}/acknowledge`, { by: 'Sam Reliability', note: 'Looking at the deploy diff.' });
  await api.post(`/api/v1/incidents/${a.id}/timeline`, { kind: 'comment', actor: 'Sam Reliability', message: 'Rolled back to 2026.11.2; error rate falling.' });
  const b = await api.post<{ id: string }>('/api/v1/incidents', { title: 'Database volume filling up (demo)', description: 'WAL archiving stalled.', severity: 'warning', labels: { demo: 'true', service: 'postgres' }, by: 'demo' });
  await api.post(`/api/v1/incidents/${b.id}/timeline`, { kind: 'comment', actor: 'Sam Reliability', message: 'Archive bucket credentials rotated; archiving resumed.' });
  await api.post(`/api/v1/incidents/${b.id}/resolve`, { by: 'Sam Reliability', note: 'Usage back to 62 %.' });
  return 2;
}

async function seedCmdb(api: DemoApi): Promise<number> {
  const entity = (type: string, name: string, health: string, attributes: Record<string, unknown> = {}) =>
    api.post<{ id: string }>('/api/v1/cmdb/entities', { type, name, natural_key: `demo:${type}:${name}`, health, attributes: { demo: true, ...attributes } });
  const project = await entity('compose_project', 'shop-demo', 'healthy');
  const web = await entity('container', 'shop-demo-web-1', 'healthy', { image: 'shop/web:2026.11.2' });
  const api1 = await entity('container', 'shop-demo-api-1', 'degraded', { image: 'shop/api:2026.11.2' });
  const db = await entity('container', 'shop-demo-db-1', 'healthy', { image: 'postgres:17' });
  const host = await entity('hostname', `shop.${demoDomain}`, 'healthy');
  const router = await entity('router', 'shop-demo@docker', 'healthy', { rule: `Host(\`shop.${demoDomain}\`)` });
  const relations: Array<[string, string, string]> = [
    [web.id, project.id, 'part_of'], [api1.id, project.id, 'part_of'], [db.id, project.id, 'part_of'],
    [web.id, api1.id, 'depends_on'], [api1.id, db.id, 'depends_on'], [host.id, router.id, 'routes_to'], [router.id, web.id, 'routes_to'],
  ];
  for (const [from, to, type] of relations) await api.post('/api/v1/cmdb/relationships', { from_entity_id: from, to_entity_id: to, type });
  return 6 + relations.length;
}

async function seedRunbooks(api: DemoApi): Promise<number> {
  const restart = await api.post<{ id: string }>('/api/v1/runbooks', {
    name: 'Restart checkout (demo)', description: 'Rolling restart of the checkout containers.', matchers: [{ label: 'service', op: '=', value: 'checkout' }],
    severities: ['critical'], auto_trigger: false, enabled: true, webhook_url: '/webhook/restart-service', parameters: { service: 'checkout' }, timeout_seconds: 300,
  });
  await api.post<{ id: string }>('/api/v1/runbooks', {
    name: 'Expand data volume (demo)', description: 'Grows the database volume by 20 %.', matchers: [{ label: 'alertname', op: '=', value: 'DiskAlmostFull' }],
    severities: ['warning', 'critical'], auto_trigger: false, enabled: true, webhook_url: '/webhook/expand-volume', timeout_seconds: 600,
  });
  // Executions go to the automation system (AUTOMATION_URL); without one they end failed, saying so.
  await api.post(`/api/v1/runbooks/${restart.id}/execute`, { by: 'demo', input: { reason: 'demo execution' } });
  await api.post(`/api/v1/runbooks/${restart.id}/execute`, { by: 'demo', input: { reason: 'second demo execution' } });
  return 4;
}

async function seedPortal(api: DemoApi): Promise<number> {
  const maya = await api.get<{ user_id: string }>(`/api/users/by-phone/${encodeURIComponent(people[0]!.phone)}`);
  const as = { 'X-User-Id': maya.user_id };
  const c1 = await api.post<{ case_id: string }>('/api/portal/cases', { title: 'Invoice charged twice (demo)', description: 'My November invoice was charged twice.', priority: 'P2' }, as);
  await api.post(`/api/portal/cases/${c1.case_id}/comments`, { body: 'The bank statement shows both charges on 3 November.' }, as);
  await api.post(`/api/portal/cases/${c1.case_id}/comments`, { body: 'Refund confirmed by the assistant; waiting for it to arrive.' }, as);
  const c2 = await api.post<{ case_id: string }>('/api/portal/cases', { title: 'Add a second delivery address (demo)', description: 'Please add our warehouse as a delivery address.', priority: 'P4' }, as);
  await api.post(`/api/portal/cases/${c2.case_id}/comments`, { body: 'Warehouse: 12 Dock Road, Unit 4.' }, as);
  let created = 5;
  const documents: Array<[string, string]> = [
    ['returns-policy-demo.md', '# Returns policy (demo)\n\nItems can be returned within 30 days of delivery. Refunds reach the original payment method within 3 business days.\n'],
    ['delivery-faq-demo.txt', 'Delivery FAQ (demo)\n\nStandard delivery takes 2 to 4 business days. Express delivery arrives the next business day when ordered before 14:00.\n'],
  ];
  for (const [filename, text] of documents) {
    const form = new FormData();
    form.append('category', 'demo');
    form.append('file', new Blob([text], { type: filename.endsWith('.md') ? 'text/markdown' : 'text/plain' }), filename);
    await api.call('POST', '/api/portal/documents', form, as);
    created++;
  }
  return created;
}

/** The sections in order, each with the question that tells whether it ran before. */
const sections: Array<{ name: string; seeded: (api: DemoApi) => Promise<boolean>; seed: (api: DemoApi) => Promise<number> }> = [
  { name: 'people and sessions', seeded: (api) => exists(api, `/api/users/by-phone/${encodeURIComponent(people[0]!.phone)}`), seed: seedPeople },
  { name: 'leads', seeded: async (api) => (await api.get(`/api/v1/leads?q=${encodeURIComponent(demoDomain)}&limit=1`)).data.length > 0, seed: seedLeads },
  // By the first seeded account's name: the accounts converted demo leads create are marked "(demo)" too.
  { name: 'accounts and opportunities', seeded: async (api) => (await api.get(`/api/v1/accounts?q=${encodeURIComponent(accountSeeds[0]!.name)}&limit=1`)).data.length > 0, seed: seedAccounts },
  { name: 'alerts', seeded: async (api) => (await api.get('/api/v1/alerts?label=demo%3Dtrue&limit=1')).items.length > 0, seed: seedAlerts },
  { name: 'incidents', seeded: async (api) => (await api.get('/api/v1/incidents?label=demo%3Dtrue&limit=1')).items.length > 0, seed: seedIncidents },
  { name: 'cmdb', seeded: async (api) => (await api.get('/api/v1/cmdb/entities?q=shop-demo&limit=1')).items.length > 0, seed: seedCmdb },
  { name: 'runbooks', seeded: async (api) => (await api.get(`/api/v1/runbooks?search=${encodeURIComponent('(demo)')}&limit=1`)).items.length > 0, seed: seedRunbooks },
  {
    name: 'portal',
    seeded: async (api) => {
      const maya = await api.get<{ user_id: string }>(`/api/users/by-phone/${encodeURIComponent(people[0]!.phone)}`);
      return (await api.get<{ cases: unknown[] }>(`/api/portal/cases?q=${encodeURIComponent('(demo)')}`, { 'X-User-Id': maya.user_id })).cases.length > 0;
    },
    seed: seedPortal,
  },
];

async function exists(api: DemoApi, path: string): Promise<boolean> {
  const res = await fetch(api.target.baseUrl + path, { headers: { 'X-API-Key': api.target.apiKey } });
  await res.arrayBuffer();
  if (res.status !== 404 && !res.ok) throw new Error(`demo: GET ${path} answered ${res.status}`);
  return res.ok;
}

/** Fills a running platform with the demo data (sections already there are skipped); refuses production. */
export async function seedDemo(target: DemoTarget): Promise<DemoReport> {
  if (target.nodeEnv === 'production') throw new Error('the demo data is for development only: refused with NODE_ENV=production');
  const api = new DemoApi(target);
  const log = target.log ?? (() => {});
  const report: DemoReport = {};
  for (const section of sections) {
    if (await section.seeded(api)) {
      report[section.name] = { created: 0, skipped: true };
      log(`demo: ${section.name}: already there`);
      continue;
    }
    const created = await section.seed(api);
    report[section.name] = { created, skipped: false };
    log(`demo: ${section.name}: ${created} written`);
  }
  return report;
}
