/**
 * The issue tracker (GitLab) as the issue-tracker tool server sees it: one project, the internal
 * address it calls, the public address its links point at, and failures turned into the platform's
 * error classes so a tool call reports them readably (not found, permission denied, conflict, timeout).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { config } from '../config.js';
import { AppError, ConflictError, ForbiddenError, NotFoundError, ServiceUnavailableError, UpstreamError, ValidationError } from '../errors.js';
import { gitlabApi, gitlabFailure, type GitLabApi } from '../clients/gitlab.js';

export interface TrackerSettings {
  apiUrl: string;
  baseUrl: string;
  projectPath: string;
  token: string;
  verifySsl: boolean;
  timeoutMs: number;
}

export interface Tracker {
  api: GitLabApi;
  /** The project, as GitLab's :id (its URL-encoded path). */
  project: string;
  settings: TrackerSettings;
  /** A public link below the project, e.g. link('-/issues/3'). */
  link(suffix: string): string;
}

/** Longest wait for one tracker call (a paged read counts as one). */
export const trackerTimeoutMs = 15_000;

/** Settings from ISSUE_TRACKER_*, or the names of the missing ones. */
export function trackerSettingsFromConfig(): TrackerSettings | { missing: string[] } {
  const t = config().toolServer.tracker;
  const missing = [
    ['ISSUE_TRACKER_API_URL', t.apiUrl],
    ['ISSUE_TRACKER_PROJECT_PATH', t.projectPath],
    ['ISSUE_TRACKER_MCP_TOKEN', t.token],
  ].filter(([, v]) => !v).map(([k]) => k!);
  if (missing.length) return { missing };
  return { apiUrl: t.apiUrl!, baseUrl: t.baseUrl!, projectPath: t.projectPath!, token: t.token, verifySsl: t.verifySsl, timeoutMs: trackerTimeoutMs };
}

/** A tracker over explicit settings. */
export function createTracker(settings: TrackerSettings): Tracker {
  const api = gitlabApi({ url: settings.apiUrl, token: settings.token, verifySsl: settings.verifySsl, timeoutMs: settings.timeoutMs });
  const base = `${settings.baseUrl.replace(/\/+$/, '')}/${settings.projectPath}`;
  return { api, project: settings.projectPath, settings, link: (suffix) => `${base}/${suffix}` };
}

const scoped = new AsyncLocalStorage<Tracker>();
let fromConfig: Tracker | undefined;

/**
 * The tracker of the tool call in progress: the one its server runs the call with (withTracker), else
 * the one from configuration. A call without either is told what to set.
 */
export function tracker(): Tracker {
  const inScope = scoped.getStore();
  if (inScope) return inScope;
  if (fromConfig) return fromConfig;
  const settings = trackerSettingsFromConfig();
  if ('missing' in settings) throw new ServiceUnavailableError(`The issue tracker is not configured: set ${settings.missing.join(', ')}.`);
  fromConfig = createTracker(settings);
  return fromConfig;
}

/** Runs fn (a request of a tool server) with its own tracker, so servers with different settings can share a process. */
export function withTracker<T>(t: Tracker, fn: () => T): T {
  return scoped.run(t, fn);
}

/**
 * Runs one tracker call, turning its failure into an error class the model can read: GitLab's status and
 * message are kept (tracker_status), 404 → not found, 401/403 → permission denied, 409/405/406/422 → conflict
 * (GitLab answers those for a merge that cannot happen or a branch or file that already exists).
 */
export async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AppError) throw err;
    const failure = gitlabFailure(err);
    const detail = { tracker_status: failure.status ?? null, tracker_message: failure.message };
    if (failure.timedOut) throw new UpstreamError(`${what}: the issue tracker did not answer within ${scoped.getStore()?.settings.timeoutMs ?? trackerTimeoutMs} ms.`, [], detail);
    switch (failure.status) {
      case 404:
        throw new NotFoundError(`${what}: not found (${failure.message}).`, [], detail);
      case 401:
      case 403:
        throw new ForbiddenError(`${what}: permission denied by the issue tracker (${failure.message}).`, [], detail);
      case 405:
      case 406:
      case 409:
      case 422:
        throw new ConflictError(`${what}: conflict (${failure.message}).`, [], detail);
      case 400:
        throw new ValidationError(`${what}: the issue tracker refused the request (${failure.message}).`, [], detail);
      default:
        throw new UpstreamError(`${what}: the issue tracker failed (${failure.status ? `status ${failure.status}: ` : ''}${failure.message}).`, [], detail);
    }
  }
}
