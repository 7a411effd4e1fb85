/** The discovery routes: trigger a run, runs, status and sources. */
import { ApiRouter } from '../../routing.js';
import { discoveryStatus, triggerDiscovery } from '../../../shared/sre/discovery/trigger.js';
import { getRun } from '../../../shared/sre/discovery/runs.store.js';
import { createSource, deleteSource, getSource, listSources, updateSource } from '../../../shared/sre/discovery/sources.store.js';
import { assertDiscoveryTarget } from '../../../shared/sre/discovery/targets.js';
import * as s from './discovery.schemas.js';
import { idParams } from '../cmdb/common.schemas.js';

const tags = ['cmdb'];
const base = '/api/v1/cmdb';
const targetRules = [
  '**Addresses the API may set.** Discovery reads from the server\'s network position, so an address set here may not be a unix socket, nor a host that is',
  'loopback, private or link-local (host names are resolved, and checked again before every read), unless configuration names it: a configured source',
  '(CONTAINER_RUNTIME_HOST, METRICS_URL, PROXY_API_URL) or an entry of DISCOVERY_ALLOWED_TARGETS (host, host:port or socket path). Otherwise 400 naming',
  '`body.address`. A source\'s errors name the system, path and status; the body it answered is logged, never returned.',
].join('\n');

export function discoveryRoutes(): ApiRouter {
  return new ApiRouter()
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
      auth: 'key-or-sre',
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
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 200: { description: 'The run', schema: s.runSchema } },
      handler: ({ params }) => getRun(params.id),
    })
    .route({
      method: 'get',
      path: `${base}/discovery/status`,
      tags,
      summary: 'Discovery status: every source with its last runs, and the latest runs',
      auth: 'key-or-sre',
      request: { query: s.statusQuery },
      responses: { 200: { description: 'Status', schema: s.statusSchema } },
      handler: ({ query }) => discoveryStatus(query.per_source, query.runs),
    })
    .route({
      method: 'get',
      path: `${base}/discovery/sources`,
      tags,
      summary: 'Discovery sources',
      description: 'Sources named docker, prometheus and traefik are seeded from CONTAINER_RUNTIME_HOST, METRICS_URL and PROXY_API_URL; `configured` is true for those (they cannot be deleted, only disabled).',
      auth: 'key-or-sre',
      responses: { 200: { description: 'Sources', schema: s.sourceList } },
      handler: async () => ({ items: await listSources() }),
    })
    .route({
      method: 'post',
      path: `${base}/discovery/sources`,
      tags,
      summary: 'Add a discovery source',
      description: targetRules,
      auth: 'key-or-sre',
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
      auth: 'key-or-sre',
      request: { params: idParams, body: s.sourcePatch },
      responses: { 200: { description: 'Updated', schema: s.sourceSchema } },
      handler: async ({ params, body }) => {
        if (body.address !== undefined) await assertDiscoveryTarget((await getSource(params.id)).kind, body.address);
        return updateSource(params.id, body);
      },
    })
    .route({
      method: 'delete',
      path: `${base}/discovery/sources/{id}`,
      tags,
      summary: 'Delete a discovery source',
      description:
        'Deletes the source, its entities (with their relationships, recommendations and monitors) and its run records. Sources seeded from CONTAINER_RUNTIME_HOST, ' +
        'METRICS_URL or PROXY_API_URL (`configured: true`) cannot be deleted while configured (they would be recreated at the next run): 409, disable them instead. ' +
        'While a discovery run is running (manual or scheduled) no source is deleted, since the run reads every source it listed at its start: 409 whose ' +
        '`run_id` names the running run; retry once it has ended (GET /discovery/runs/{id}). Manual entities are never affected.',
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 204: { description: 'Deleted' } },
      errors: { 409: 'The source comes from configuration, or a discovery run (`run_id`) is in progress' },
      handler: async ({ params }, ctx) => {
        await deleteSource(params.id);
        ctx.status = 204;
      },
    });
}
