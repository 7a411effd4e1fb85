/** The monitor routes: recommendations (proposed, applied, dismissed) and deployment to Prometheus. */
import { ApiRouter } from '../../routing.js';
import { applyRecommendation, deleteMonitor, dismissRecommendation, listMonitors, listRecommendations, setMonitorEnabled } from '../../../shared/sre/monitors/recommendations.store.js';
import { templateCatalog } from '../../../shared/sre/monitors/templates.js';
import { proposeWithModel } from '../../../shared/sre/monitors/recommend.js';
import { requestMonitorDeploy } from '../../../shared/sre/monitors/deploy-request.js';
import * as s from './monitors.schemas.js';
import { idParams } from '../cmdb/common.schemas.js';

const tags = ['cmdb'];
const base = '/api/v1/cmdb';

export function monitorRoutes(): ApiRouter {
  return new ApiRouter()
    .route({
      method: 'get',
      path: `${base}/recommendations`,
      tags,
      summary: 'Monitoring recommendations',
      auth: 'key-or-sre',
      request: { query: s.recommendationQuery },
      responses: { 200: { description: 'Recommendations', schema: s.recommendationList } },
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
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 200: { description: 'Stored and rejected proposals', schema: s.proposalResponse } },
      errors: { 502: 'The model call failed or did not answer JSON', 503: 'No language model configured' },
      handler: ({ params }) => proposeWithModel(params.id),
    })
    .route({
      method: 'post',
      path: `${base}/recommendations/{id}/apply`,
      tags,
      summary: 'Turn a recommendation into a pending entity monitor (idempotent)',
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 200: { description: 'The monitor', schema: s.monitorSchema } },
      errors: { 409: 'The recommendation was dismissed' },
      handler: ({ params }) => applyRecommendation(params.id),
    })
    .route({
      method: 'post',
      path: `${base}/recommendations/{id}/dismiss`,
      tags,
      summary: 'Dismiss a proposed recommendation',
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 200: { description: 'The recommendation', schema: s.recommendationSchema } },
      errors: { 409: 'The recommendation is applied' },
      handler: ({ params }) => dismissRecommendation(params.id),
    })
    .route({
      method: 'get',
      path: `${base}/monitors`,
      tags,
      summary: 'Entity monitors',
      auth: 'key-or-sre',
      request: { query: s.monitorQuery },
      responses: { 200: { description: 'Monitors', schema: s.monitorList } },
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
        '(matched by its `sre_monitor_id` label), then marks the pending ones deployed. The deployment runs on a worker of the `rules` queue ' +
        '(the pool that shares RULES_DIR with Prometheus; WORKER_QUEUES) while the request waits for it, one deployment at a time; ' +
        'no such worker finishing within MONITORS_DEPLOY_WAIT_MS is a 503. ' +
        'On any failure the previous rule file is restored (and reloaded), the monitors stay pending with `last_error`, and the answer is 502. ' +
        'Disabled monitors are left out. Monitors of entities gone stale are deleted first and counted in `removed_stale`; `removed` counts the ' +
        'rules the previous file had and the new one has not. With nothing pending and the file already as it should be it answers 200 with ' +
        '`deployed: 0` and touches nothing.',
      auth: 'key-or-sre',
      responses: { 200: { description: 'Deployment done', schema: s.deployResponse } },
      errors: { 502: 'promtool or Prometheus rejected or did not load the rules; nothing changed', 503: 'METRICS_URL is not configured, or no worker of the rules queue answered in time' },
      handler: () => requestMonitorDeploy(),
    })
    .route({
      method: 'patch',
      path: `${base}/monitors/{id}`,
      tags,
      summary: 'Disable or enable a monitor',
      description: 'A disabled monitor is kept (status `disabled`) and left out of the rule file from the next deploy on; enabling it makes it pending again.',
      auth: 'key-or-sre',
      request: { params: idParams, body: s.monitorPatch },
      responses: { 200: { description: 'The monitor', schema: s.monitorSchema } },
      handler: ({ params, body }) => setMonitorEnabled(params.id, body.enabled),
    })
    .route({
      method: 'delete',
      path: `${base}/monitors/{id}`,
      tags,
      summary: 'Remove a monitor',
      description: 'Its recommendation goes back to `proposed` (it can be applied again); a deployed rule leaves the rule file at the next deploy.',
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 204: { description: 'Removed' } },
      handler: async ({ params }, ctx) => {
        await deleteMonitor(params.id);
        ctx.status = 204;
      },
    })
    .route({
      method: 'get',
      path: `${base}/monitor-templates`,
      tags,
      summary: 'Built-in monitoring templates',
      description: [
        'Every entity type discovery creates has built-in templates; new entities get their recommendations (monitors with MONITORS_AUTO_APPLY).',
        'Each template names the exporter whose metric it uses; the rule only fires where that exporter is scraped by the metrics system:',
        '',
        ...templateCatalog.map((t) => `- \`${t.entity_type}\` · \`${t.alert}\`: ${t.exporter} (${t.metrics.join(', ')})${t.condition ? `, when ${t.condition}` : ''}`),
      ].join('\n'),
      auth: 'key-or-sre',
      responses: { 200: { description: 'Templates', schema: s.templateList } },
      handler: () => ({ items: templateCatalog }),
    });
}
