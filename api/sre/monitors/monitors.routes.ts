/** The monitor routes: recommendations (proposed, applied, dismissed) and deployment to Prometheus. */
import { ApiRouter } from '../../routing.js';
import { z } from '../../../shared/zod.js';
import { applyRecommendation, dismissRecommendation, listMonitors, listRecommendations } from '../../../shared/sre/monitors/recommendations.store.js';
import { proposeWithModel } from '../../../shared/sre/monitors/recommend.js';
import { deployAllMonitors } from '../../../shared/sre/monitors/deploy.js';
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
      auth: 'apiKey',
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
      auth: 'apiKey',
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
