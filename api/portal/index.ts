/** The self-service portal's routers (spec 002 § Self-service portal), one per resource. */
import type { ApiRouter } from '../routing.js';
import { profileRoutes } from './profile.routes.js';
import { contactRoutes } from './contacts.routes.js';
import { documentRoutes } from './documents.routes.js';
import { caseRoutes, staffRoutes } from './cases.routes.js';
import { portalRemoteRoutes } from './remote.routes.js';
import { portalChatRoutes } from './chat.routes.js';

export function portalRouters(): ApiRouter[] {
  return [profileRoutes(), contactRoutes(), documentRoutes(), caseRoutes(), staffRoutes(), portalRemoteRoutes(), portalChatRoutes()];
}
