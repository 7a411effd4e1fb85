/** The CMDB API (/api/v1/cmdb): entities, discovery, monitoring recommendations and monitors. */
import { ApiRouter } from '../routing.js';
import { z } from '../../shared/zod.js';
import { listEntities } from '../../shared/sre/cmdb/entities.store.js';
import { entityDetail, entityNeighbourhood } from '../../shared/sre/cmdb/views.js';
import { entityTypes } from '../../shared/sre/cmdb/model.js';
import { discoveryStatus, triggerDiscovery } from '../../shared/sre/discovery/trigger.js';
import { getRun } from '../../shared/sre/discovery/runs.store.js';
import { createSource, getSource, listSources, updateSource } from '../../shared/sre/discovery/sources.store.js';
import { assertDiscoveryTarget } from '../../shared/sre/discovery/targets.js';
import { applyRecommendation, dismissRecommendation, listMonitors, listRecommendations } from '../../shared/sre/monitors/recommendations.store.js';
import { proposeWithModel } from '../../shared/sre/monitors/recommend.js';
import { deployAllMonitors } from '../../shared/sre/monitors/deploy.js';
import * as s from './cmdb.schemas.js';

const tags = ['cmdb'];
const base = '/api/v1/cmdb';
const targetRules = [
  '**Addresses the API may set.** Discovery reads from the server\'s network position, so an address set here may not be a unix socket, nor a host that is',
  'loopback, private or link-local (host names are resolved, and checked again before every read), unless configuration names it: a configured source',
  '(CONTAINER_RUNTIME_HOST, METRICS_URL, PROXY_API_URL) or an entry of DISCOVERY_ALLOWED_TARGETS (host, host:port or socket path). Otherwise 400 naming',
  '`body.address`. A source\'s errors name the system, path and status; the body it answered is logged, never returned.',
].join('\n');

export function cmdbRoutes(): ApiRouter {
  return new ApiRouter()
    .route({
      method: 'get',
      path: `${base}/entity-types`,
      tags,
      summary: 'Entity types the CMDB knows',
      auth: 'apiKey',
      responses: { 200: { description: 'Entity type names', schema: z.object({ items: z.array(z.string()) }) } },
      handler: () => ({ items: [...entityTypes] }),
    })
    .route({
      method: 'get',
      path: `${base}/entities`,
      tags,
      summary: 'List and filter entities',
      description:
        'Filters combine with AND. `stale=true` lists entities no longer reported by their source (kept, not deleted). ' +
        '`last_seen_at` of a live entity is the start of its source\'s latest successful discovery run. Ordered by type, name.',
      auth: 'apiKey',
      request: { query: s.entityQuery },
      responses: { 200: { description: 'A page of entities', schema: s.entityList } },
      handler: async ({ query }) => ({ ...(await listEntities(query)), limit: query.limit, offset: query.offset }),
    })
    .route({
      method: 'get',
      path: `${base}/entities/{id}`,
      tags,
      summary: 'An entity with its relationships (both directions), monitors and recommendations',
      auth: 'apiKey',
      request: { params: s.idParams },
      responses: { 200: { description: 'The entity', schema: s.entityDetail } },
      handler: ({ params }) => entityDetail(params.id),
    })
    .route({
      method: 'get',
      path: `${base}/entities/{id}/neighbourhood`,
      tags,
      summary: "An entity's neighbourhood to depth n",
      description: 'Follows relationships in both directions up to `depth` hops (1–5, default 1); each entity carries its shortest `distance`.',
      auth: 'apiKey',
      request: { params: s.idParams, query: s.neighbourhoodQuery },
      responses: { 200: { description: 'Entities and the relationships among them', schema: s.neighbourhoodSchema } },
      handler: ({ params, query }) => entityNeighbourhood(params.id, query.depth),
    })
    .route({
      method: 'post',
      path: `${base}/discovery/trigger`,
      tags,
      summary: 'Start a discovery run (no body)',
      description:
        'Answers 202 with the run id; the run executes on the `discovery` queue. While a run is running (manual or scheduled) ' +
        'no second one starts: the answer names the running run with `already_running: true`. Poll GET /discovery/runs/{id}. ' +
        'Scheduled runs (every DISCOVERY_INTERVAL seconds when DISCOVERY_ENABLED) open one run per interval slot; a slot whose tick ' +
        'finds a run already running is covered by that run. A run left running for max(30 min, 3 intervals) is marked failed as abandoned.',
      auth: 'apiKey',
      responses: { 202: { description: 'The run that covers this trigger', schema: s.triggerResponse } },
      handler: async (_input, ctx) => {
        const { run, created } = await triggerDiscovery();
        ctx.status = 202;
        ctx.set('Location', `${base}/discovery/runs/${run.id}`);
        return { run_id: run.id, status: run.status, started_at: run.started_at, already_running: !created };
      },
    })
    .route({
      method: 'get',
      path: `${base}/discovery/runs/{id}`,
      tags,
      summary: 'One discovery run',
      description: '`errors` maps each failed source name to its error; a failed source fails only its own part (`status: partial`).',
      auth: 'apiKey',
      request: { params: s.idParams },
      responses: { 200: { description: 'The run', schema: s.runSchema } },
      handler: ({ params }) => getRun(params.id),
    })
    .route({
      method: 'get',
      path: `${base}/discovery/status`,
      tags,
      summary: 'Discovery status: every source with its last runs, and the latest runs',
      auth: 'apiKey',
      request: { query: s.statusQuery },
      responses: { 200: { description: 'Status', schema: s.statusSchema } },
      handler: ({ query }) => discoveryStatus(query.per_source, query.runs),
    })
    .route({
      method: 'get',
      path: `${base}/discovery/sources`,
      tags,
      summary: 'Discovery sources',
      description: 'Sources named docker, prometheus and traefik are seeded from CONTAINER_RUNTIME_HOST, METRICS_URL and PROXY_API_URL.',
      auth: 'apiKey',
      responses: { 200: { description: 'Sources', schema: z.object({ items: z.array(s.sourceSchema) }) } },
      handler: async () => ({ items: await listSources() }),
    })
    .route({
      method: 'post',
      path: `${base}/discovery/sources`,
      tags,
      summary: 'Add a discovery source',
      description: targetRules,
      auth: 'apiKey',
      request: { body: s.sourceCreate },
      responses: { 201: { description: 'Created', schema: s.sourceSchema } },
      errors: { 409: 'A source of that name exists' },
      handler: async ({ body }, ctx) => {
        await assertDiscoveryTarget(body.kind, body.address);
        ctx.status = 201;
        return createSource(body);
      },
    })
    .route({
      method: 'patch',
      path: `${base}/discovery/sources/{id}`,
      tags,
      summary: 'Enable, disable or re-address a discovery source',
      description: `A disabled source is not read; its entities keep their state (they are not marked stale).\n\n${targetRules}`,
      auth: 'apiKey',
      request: { params: s.idParams, body: s.sourcePatch },
      responses: { 200: { description: 'Updated', schema: s.sourceSchema } },
      handler: async ({ params, body }) => {
        if (body.address !== undefined) await assertDiscoveryTarget((await getSource(params.id)).kind, body.address);
        return updateSource(params.id, body);
      },
    })
    .route({
      method: 'get',
      path: `${base}/recommendations`,
      tags,
      summary: 'Monitoring recommendations',
      auth: 'apiKey',
      request: { query: s.recommendationQuery },
      responses: { 200: { description: 'Recommendations', schema: z.object({ items: z.array(s.recommendationSchema) }) } },
      handler: async ({ query }) => ({ items: await listRecommendations(query) }),
    })
    .route({
      method: 'post',
      path: `${base}/entities/{id}/recommendations/propose`,
      tags,
      summary: 'Ask the language model for further alerting rules for an entity (no body)',
      description:
        'Each proposed rule is validated as a Prometheus alerting rule (schema, then `promtool check rules` when installed) before it is ' +
        'stored as a `proposed` recommendation; invalid ones are listed under `rejected` with the checker\'s message. ' +
        'Runs synchronously (one model call). 503 when no model is configured; 502 when the model fails.',
      auth: 'apiKey',
      request: { params: s.idParams },
      responses: { 200: { description: 'Stored and rejected proposals', schema: s.proposalResponse } },
      errors: { 502: 'The model call failed or did not answer JSON', 503: 'No language model configured' },
      handler: ({ params }) => proposeWithModel(params.id),
    })
    .route({
      method: 'post',
      path: `${base}/recommendations/{id}/apply`,
      tags,
      summary: 'Turn a recommendation into a pending entity monitor (idempotent)',
      auth: 'apiKey',
      request: { params: s.idParams },
      responses: { 200: { description: 'The monitor', schema: s.monitorSchema } },
      errors: { 409: 'The recommendation was dismissed' },
      handler: ({ params }) => applyRecommendation(params.id),
    })
    .route({
      method: 'post',
      path: `${base}/recommendations/{id}/dismiss`,
      tags,
      summary: 'Dismiss a proposed recommendation',
      auth: 'apiKey',
      request: { params: s.idParams },
      responses: { 200: { description: 'The recommendation', schema: s.recommendationSchema } },
      errors: { 409: 'The recommendation is applied' },
      handler: ({ params }) => dismissRecommendation(params.id),
    })
    .route({
      method: 'get',
      path: `${base}/monitors`,
      tags,
      summary: 'Entity monitors',
      auth: 'apiKey',
      request: { query: s.monitorQuery },
      responses: { 200: { description: 'Monitors', schema: z.object({ items: z.array(s.monitorSchema) }) } },
      handler: async ({ query }) => ({ items: await listMonitors(query) }),
    })
    .route({
      method: 'post',
      path: `${base}/monitors/deploy-all`,
      tags,
      summary: 'Deploy all pending monitors to Prometheus (no body)',
      description:
        'Writes every monitor (pending and already deployed) as one rule group into `RULES_DIR/switchboard-monitors.yml` (temporary file, ' +
        '`promtool check rules`, atomic rename), POSTs METRICS_URL/-/reload and waits until /api/v1/rules lists every rule ' +
        '(matched by its `sre_monitor_id` label), then marks the pending ones deployed. Runs synchronously, one deployment at a time. ' +
        'On any failure the previous rule file is restored (and reloaded), the monitors stay pending with `last_error`, and the answer is 502. ' +
        'With nothing pending it answers 200 with `deployed: 0` and touches nothing.',
      auth: 'apiKey',
      responses: { 200: { description: 'Deployment done', schema: s.deployResponse } },
      errors: { 502: 'promtool or Prometheus rejected or did not load the rules; nothing changed', 503: 'METRICS_URL is not configured' },
      handler: () => deployAllMonitors(),
    });
}
