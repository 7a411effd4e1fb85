/** The alerting part of the SRE API: webhooks, alerts, incidents, runbooks. */
import type { ApiRouter } from '../routing.js';
import { webhookRoutes } from './webhooks.routes.js';
import { alertRoutes } from './alerts.routes.js';
import { silenceRoutes } from './silences.routes.js';
import { incidentRoutes } from './incidents.routes.js';
import { runbookRoutes } from './runbooks.routes.js';

export function alertingRouters(): ApiRouter[] {
  // Silences before alerts: /api/v1/alerts/silences must not be taken for an alert id.
  return [webhookRoutes(), silenceRoutes(), alertRoutes(), incidentRoutes(), runbookRoutes()];
}
