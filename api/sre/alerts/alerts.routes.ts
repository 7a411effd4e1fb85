/** /api/v1/alerts: alert instances, their lifecycle and history, and the alert sources (webhook endpoints). */
import { ApiRouter } from '../../routing.js';
import { alertCounts, alertHistory, getAlert, listAlerts } from '../../../shared/sre/alerts/alert.store.js';
import { moveAlert } from '../../../shared/sre/alerts/alerts.js';
import { createSource, deleteSource, forgetSources, getSource, listSources, updateSource } from '../../../shared/sre/alerts/alert-source.store.js';
import * as s from './alerts.schemas.js';
import { idParams, actorBody } from '../common.schemas.js';
import { actorOf } from '../../auth/browser-session.js';

const tags = ['alerts'];
const lifecycle = 'Lifecycle: firing → acknowledged → resolved (firing → resolved directly too). A move not allowed from the current state is a 409 naming `allowed_next_states`. Every move writes a state-history row (from, to, by, when) and re-evaluates flapping. A firing notification after resolution opens a new instance.';

export function alertRoutes(): ApiRouter {
  const router = new ApiRouter();
  // Sources first: /api/v1/alerts/sources must not be taken for an alert id.
  router
    .route({
      method: 'get',
      path: '/api/v1/alerts/sources',
      tags,
      summary: 'List alert sources',
      description: 'Webhook endpoints, one per kind and name. `default` of each kind exists from the first migration. Secrets are never returned.',
      auth: 'key-or-sre',
      request: { query: s.sourceQuery },
      responses: { 200: { description: 'a page of sources', schema: s.sourcePage } },
      handler: ({ query }) => listSources(query),
    })
    .route({
      method: 'post',
      path: '/api/v1/alerts/sources',
      tags,
      summary: 'Create an alert source',
      description: 'Its webhook is POST /webhooks/{kind}/{name}. Without a secret, ALERT_WEBHOOK_TOKEN applies.',
      auth: 'key-or-sre',
      request: { body: s.sourceCreate },
      responses: { 201: { description: 'created', schema: s.alertSource } },
      errors: { 409: 'A source of that kind and name exists' },
      handler: async ({ body }) => {
        const source = await createSource(body);
        forgetSources();
        return source;
      },
    })
    .route({
      method: 'get',
      path: '/api/v1/alerts/sources/{id}',
      tags,
      summary: 'Get an alert source',
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 200: { description: 'the source', schema: s.alertSource } },
      handler: ({ params }) => getSource(params.id),
    })
    .route({
      method: 'patch',
      path: '/api/v1/alerts/sources/{id}',
      tags,
      summary: 'Change an alert source (secret, enabled)',
      description: 'Kind and name are fixed (they form the webhook URL). `secret: null` returns to ALERT_WEBHOOK_TOKEN. A disabled source answers 404 to its webhook.',
      auth: 'key-or-sre',
      request: { params: idParams, body: s.sourcePatch },
      responses: { 200: { description: 'changed', schema: s.alertSource } },
      handler: async ({ params, body }) => {
        const source = await updateSource(params.id, body);
        forgetSources();
        return source;
      },
    })
    .route({
      method: 'delete',
      path: '/api/v1/alerts/sources/{id}',
      tags,
      summary: 'Delete an alert source and its alerts',
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 204: { description: 'deleted' } },
      errors: { 409: 'The default sources cannot be deleted (disable them instead)' },
      handler: async ({ params }, ctx) => {
        await deleteSource(params.id);
        forgetSources();
        ctx.status = 204;
      },
    })
    .route({
      method: 'get',
      path: '/api/v1/alerts',
      tags,
      summary: 'List alert instances',
      description: 'Newest activity first. `since`/`until` filter on last_received_at. `status` and `severity` take comma-separated lists.',
      auth: 'key-or-sre',
      request: { query: s.alertQuery },
      responses: { 200: { description: 'a page of alerts', schema: s.alertPage } },
      handler: ({ query }) => listAlerts(query),
    })
    .route({
      method: 'get',
      path: '/api/v1/alerts/counts',
      tags,
      summary: 'Alert counts by status and severity',
      description: '`by_status` counts every stored instance; `by_severity` counts the live ones (firing or acknowledged). For the dashboard header.',
      auth: 'key-or-sre',
      responses: { 200: { description: 'counts', schema: s.alertCountsSchema } },
      handler: () => alertCounts(),
    })
    .route({
      method: 'get',
      path: '/api/v1/alerts/{id}',
      tags,
      summary: 'Get an alert instance',
      auth: 'key-or-sre',
      request: { params: idParams },
      responses: { 200: { description: 'the alert', schema: s.alertInstance } },
      handler: ({ params }) => getAlert(params.id),
    })
    .route({
      method: 'get',
      path: '/api/v1/alerts/{id}/history',
      tags,
      summary: 'State history of an alert instance',
      description: 'Oldest first. Senders appear as `sender:<kind>/<source>`.',
      auth: 'key-or-sre',
      request: { params: idParams, query: s.pageOnly },
      responses: { 200: { description: 'a page of state changes', schema: s.alertHistoryPage } },
      handler: ({ params, query }) => alertHistory(params.id, query),
    });
  for (const [action, to] of [
    ['acknowledge', 'acknowledged'],
    ['resolve', 'resolved'],
  ] as const) {
    router.route({
      method: 'post',
      path: `/api/v1/alerts/{id}/${action}`,
      tags,
      summary: `${action[0]!.toUpperCase()}${action.slice(1)} an alert`,
      description: lifecycle,
      auth: 'key-or-sre',
      request: { params: idParams, body: actorBody },
      responses: { 200: { description: `the alert, now ${to}`, schema: s.alertInstance } },
      errors: { 409: 'The alert cannot make this move from its current state' },
      handler: ({ params, body }, ctx) => moveAlert(params.id, to, actorOf(ctx, body.by), body.note),
    });
  }
  return router;
}
