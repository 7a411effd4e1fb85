/** Every router of the CRM. */
import type { ApiRouter } from '../routing.js';
import { accountRoutes } from './accounts.routes.js';
import { crmEventRoutes } from './events.routes.js';
import { leadRoutes } from './leads.routes.js';
import { opportunityRoutes } from './opportunities.routes.js';
import { pipelineRoutes } from './pipelines.routes.js';
import { webhookRoutes } from './webhooks.routes.js';

export const crmRouters = (): ApiRouter[] => [leadRoutes(), accountRoutes(), opportunityRoutes(), pipelineRoutes(), webhookRoutes(), crmEventRoutes()];
