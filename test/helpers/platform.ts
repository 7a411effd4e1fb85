/**
 * The platform in the test process: the API on a random port and the workers of every queue,
 * against this file's own database and queue prefix. Stopped by the per-file teardown.
 */
import { startServer } from '../../api/server.js';
import { loadToolCatalog } from '../../shared/tool-catalog.js';
import { closeWorkers, startWorkers } from '../../workers/runner.js';
import { handlers } from '../../workers/registry.js';
import { registry } from '../../shared/queues.js';
import { onShutdown } from '../../shared/lifecycle.js';
import type { ApiRouter } from '../../api/routing.js';

export interface Platform {
  url: string;
  /** fetch against the API with the test API key unless `auth: false`. */
  request: (path: string, init?: RequestInit & { json?: unknown; auth?: boolean }) => Promise<Response>;
}

export const testApiKey = 'test-key';

let started: Promise<Platform> | undefined;

/** Starts (once per file) the API and, unless `workers: false`, every worker. */
/** `port`: listen there (the port PUBLIC_URL names when a test signs in, see identity.ts); default any free one. */
export function startPlatform(options: { workers?: boolean; routers?: ApiRouter[]; port?: number } = {}): Promise<Platform> {
  process.env.API_KEYS ??= testApiKey;
  // What api/main.ts and workers/main.ts do at start-up.
  loadToolCatalog();
  started ??= (async () => {
    if (options.workers !== false) {
      const workers = startWorkers(registry, handlers);
      onShutdown('workers', () => closeWorkers(workers));
    }
    const { url } = await startServer(options.port ?? 0, '127.0.0.1', options.routers);
    return platformAt(url);
  })();
  return started;
}

/** The Platform view of an API at `url` (one started here, or a role's own process: test/helpers/roles.ts). */
export function platformAt(url: string): Platform {
  const request: Platform['request'] = (path, init = {}) => {
    const { json, auth = true, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (auth && !headers.has('X-API-Key') && !headers.has('Authorization')) headers.set('X-API-Key', testApiKey);
    if (json !== undefined) headers.set('Content-Type', 'application/json');
    return fetch(url + path, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
  };
  return { url, request };
}
