/** Puts every domain's tools into the one registry (shared/tools.ts). Idempotent; call before listing tools. */
import { registerTools } from './tools.js';
import { crmTools } from './crm/crm.tools.js';
import { portalTools } from './portal/portal.tools.js';

let loaded = false;

export function loadToolCatalog(): void {
  if (loaded) return;
  loaded = true;
  registerTools([
    // crm
    ...crmTools,
    // portal
    ...portalTools,
  ]);
}
