/** The alerting part of the SRE API: webhooks, alerts, incidents, runbooks, and the live SRE events. */
import type { ApiRouter } from '../routing.js';
import { webhookRoutes } from './webhooks.routes.js';
import { alertRoutes } from './alerts.routes.js';
import { incidentRoutes } from './incidents.routes.js';
import { runbookRoutes } from './runbooks.routes.js';
import { sreEventRoutes } from './events.routes.js';

export function alertingRouters(): ApiRouter[] {
  return [webhookRoutes(), alertRoutes(), incidentRoutes(), runbookRoutes(), sreEventRoutes()];
}
