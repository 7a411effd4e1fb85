/** The SRE API: alert webhooks and alerts, incidents, runbooks, the CMDB, discovery and monitors, and their live events. */
import type { ApiRouter } from '../routing.js';
import { webhookRoutes } from './alerts/webhooks.routes.js';
import { alertRoutes } from './alerts/alerts.routes.js';
import { incidentRoutes } from './incidents/incidents.routes.js';
import { runbookRoutes } from './runbooks/runbooks.routes.js';
import { cmdbRoutes } from './cmdb/cmdb.routes.js';
import { discoveryRoutes } from './discovery/discovery.routes.js';
import { monitorRoutes } from './monitors/monitors.routes.js';
import { sreEventRoutes } from './events/events.routes.js';

export function sreRouters(): ApiRouter[] {
  return [webhookRoutes(), alertRoutes(), incidentRoutes(), runbookRoutes(), cmdbRoutes(), discoveryRoutes(), monitorRoutes(), sreEventRoutes()];
}
