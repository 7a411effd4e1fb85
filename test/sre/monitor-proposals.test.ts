// needs: prometheus
import { afterAll, describe, expect, it } from 'vitest';
import type { ContainerSummary } from '../../shared/clients/docker.js';
import { useLocalLlm } from '../helpers/local-llm-server.js';
import { dockerApiServer } from './discovery-servers.js';
import { eventually } from '../helpers/eventually.js';

// Containers of two template signatures: with a health check (5 templates) and without (4), plus their compose project.
const container = (name: string, status: string): ContainerSummary => ({
  Id: `${name}-0123456789abcdef`, Names: [`/${name}`], Image: 'example/app:1', State: 'running', Status: status,
  Labels: { 'com.docker.compose.project': 'fleet', 'com.docker.compose.service': 'app' }, Ports: [], NetworkSettings: { Networks: {} },
});
const docker = { containers: [...Array.from({ length: 30 }, (_, i) => container(`app-${i}`, 'Up 1 minute (healthy)')), container('sidecar', 'Up 1 minute')], delayMs: 0, fail: false };
const dockerApi = await dockerApiServer(docker);

// The model answers with one rule naming the entity by placeholder, one that does not, one that promtool rejects.
const llm = await useLocalLlm(() => ({
  content: JSON.stringify({
    rules: [
      { alert: 'ContainerOomKilled', expr: 'increase(container_oom_events_total{name="{{name}}"}[10m]) > 0', labels: { severity: 'warning' }, annotations: { summary: '{{name}} was OOM-killed' }, rationale: 'memory limit too low' },
      { alert: 'AnyContainerDown', expr: 'count(up == 0) > 0', labels: { severity: 'warning' } },
      { alert: 'Broken', expr: 'rate(container_cpu_usage_seconds_total{name="{{name}}"}[5m]', labels: {} },
    ],
  }),
}));

process.env.CONTAINER_RUNTIME_HOST = `tcp://127.0.0.1:${dockerApi.port}`;
process.env.DISCOVERY_ENABLED = 'false';
process.env.MONITORS_AUTO_APPLY = 'true';
process.env.LLM_MODEL = 'test-model';

const { startPlatform } = await import('../helpers/platform.js');
const { db } = await import('../../shared/db/index.js');
const api = await startPlatform();
afterAll(async () => {
  await dockerApi.close();
});

describe('model proposals for new entities', () => {
  it('one model call per entity type and template signature, its valid rules proposed for every entity of the group', async () => {
    const { run_id } = await (await api.request('/api/v1/cmdb/discovery/trigger', { method: 'POST' })).json();
    await eventually(async () => (await (await api.request(`/api/v1/cmdb/discovery/runs/${run_id}`)).json()).status === 'succeeded', 20_000, 'discovery');
    // 31 containers in two signatures and one compose project: three groups, three calls, not 32.
    const llmRows = async () => Number((await db()('sre_recommendations').where({ origin: 'llm' }).count<{ n: number }[]>({ n: '*' }))[0]!.n);
    await eventually(async () => llm.requests.length === 3 && (await llmRows()) === 32, 20_000, 'the group proposals');
    const examples = llm.requests.map((r) => JSON.parse(r.body.messages.at(-1)!.content ?? "") as { type: string; entities: number });
    expect(examples.map((e) => `${e.type}:${e.entities}`).sort()).toEqual(['compose_project:1', 'container:1', 'container:30']);
    const rows = await db()('sre_recommendations as r').join('sre_entities as e', 'e.id', 'r.entity_id').where('r.origin', 'llm').select('e.name', 'r.alert', 'r.rule', 'r.status');
    const sidecar = rows.find((r: { name: string }) => r.name === 'sidecar');
    expect(sidecar).toMatchObject({ alert: 'ContainerOomKilled', status: 'proposed', rule: { expr: 'increase(container_oom_events_total{name="sidecar"}[10m]) > 0', annotations: { summary: 'sidecar was OOM-killed' } } });
    expect(new Set(rows.map((r: { alert: string }) => r.alert))).toEqual(new Set(['ContainerOomKilled']));
    // Proposals only: no monitor from the model.
    expect(await db()('sre_entity_monitors').where({ alert: 'ContainerOomKilled' }).first()).toBeUndefined();
  });
});
