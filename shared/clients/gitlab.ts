/**
 * GitLab REST API v4 through @gitbeaker/rest (https://docs.gitlab.com/api/rest/): one connection
 * factory for the SRE incident tickets (create, comment, close/reopen; ISSUE_TRACKER_URL/TOKEN/PROJECT_ID) and the issue-tracker
 * tool server (ISSUE_TRACKER_API_URL/MCP_TOKEN). The token goes out as PRIVATE-TOKEN.
 */
import type { Gitlab } from '@gitbeaker/rest';
import type { FormattedResponse, RateLimiters } from '@gitbeaker/requester-utils';
import type { Agent as HttpAgent } from 'node:http';
import { config } from '../config.js';
import { loadOnFirstUse } from '../load-on-first-use.js';
import { ExternalHttpError } from './http.js';

// gitbeaker and undici together cost an API process ~8 MB of heap (~25 MB RSS): loaded when a GitLab client is first made.
const gitbeaker = loadOnFirstUse<typeof import('@gitbeaker/rest')>('@gitbeaker/rest');
const requesterUtils = loadOnFirstUse<typeof import('@gitbeaker/requester-utils')>('@gitbeaker/requester-utils');
// undici stays on the major that Node's own fetch bundles (7 in Node 22 and 24): fetch refuses a dispatcher of another major.
const undici = loadOnFirstUse<typeof import('undici')>('undici');

export type GitLabApi = InstanceType<typeof Gitlab<false>>;

export interface GitLabConnection {
  /** Base address of the GitLab instance (the API is below /api/v4). */
  url: string;
  token: string;
  /** false accepts any certificate of this address (a self-signed internal GitLab); default true. */
  verifySsl?: boolean;
  /** Longest wait for one call (paged reads included). */
  timeoutMs?: number;
}

/** Statuses gitbeaker's own request handler repeats a request on (rate limited; bad gateway). */
const retryStatuses = [429, 502];
const maxAttempts = 10;

/**
 * Whether a request that got this status may be sent again. gitbeaker (43.8) repeats every method on
 * 502 up to 10 times, but a 502 from a proxy can come after GitLab carried out the request: a POST
 * repeated that way creates a second issue or note. So a 502 is repeated only for methods that
 * change nothing twice (GET, PUT, DELETE); a POST or PATCH fails at once and its caller decides (the
 * ticket job looks the issue up before creating it again). 429 means GitLab refused the request
 * unseen, so it is repeated for every method.
 */
export function repeatable(method: string, status: number): boolean {
  if (status === 429) return true;
  return status === 502 && !['POST', 'PATCH'].includes(method.toUpperCase());
}

async function responseBody(response: Response, asStream: boolean): Promise<unknown> {
  if (asStream) return response.body;
  if (response.status === 204) return null;
  const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (type === 'application/json') return (await response.json()) || {};
  if (type.startsWith('text/')) return (await response.text()) || '';
  return response.blob();
}

/** gitbeaker's failure for an answer outside 2xx: GitLab's `error` or `message` as description, the response as cause. */
async function requestError(request: Request, response: Response) {
  const content = await response.text();
  let description = content;
  if (response.headers.get('content-type')?.includes('application/json')) {
    try {
      const output = JSON.parse(content) as { error?: unknown; message?: unknown };
      const property = output?.error || output?.message || '';
      description = typeof property === 'string' ? property : JSON.stringify(property);
    } catch {
      // Not JSON after all: the text is the description.
    }
  }
  return new (gitbeaker().GitbeakerRequestError)(description, { cause: { description, request, response } });
}

/**
 * gitbeaker's request handler (fetch, rate limiters, timeout errors, the same backoff) with one
 * change: see `repeatable`.
 */
async function requestHandler(endpoint: string, options: Record<string, unknown> = {}): Promise<FormattedResponse> {
  const { rateLimiters, agent, asStream, prefixUrl, searchParams, method = 'GET', ...init } = options as RequestInit & {
    rateLimiters?: RateLimiters; agent?: unknown; asStream?: boolean; prefixUrl?: string; searchParams?: string; method?: string;
  };
  const rateLimit = requesterUtils().getMatchingRateLimiter(endpoint, rateLimiters, method);
  const url = new URL(endpoint, prefixUrl ? (prefixUrl.endsWith('/') ? prefixUrl : `${prefixUrl}/`) : undefined);
  url.search = searchParams || '';
  let lastStatus: number | undefined;
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const request = new Request(url, { ...init, method });
    await rateLimit();
    const response = await fetch(request, agent ? ({ dispatcher: agent } as RequestInit) : undefined).catch((err: Error) => {
      if (err.name === 'TimeoutError' || err.name === 'AbortError') throw new (gitbeaker().GitbeakerTimeoutError)('Query timeout was reached');
      throw err;
    });
    if (response.ok) {
      return { body: (await responseBody(response, asStream ?? false)) as FormattedResponse['body'], headers: Object.fromEntries(response.headers.entries()), status: response.status };
    }
    if (!retryStatuses.includes(response.status) || !repeatable(method, response.status)) throw await requestError(request, response);
    lastStatus = response.status;
    await new Promise((resolve) => setTimeout(resolve, 2 ** attempt * 0.25));
  }
  throw new (gitbeaker().GitbeakerRetryError)(`Could not successfully complete this request after ${maxAttempts} retries, last status code: ${lastStatus}.`);
}

let requesterFn: ReturnType<typeof import('@gitbeaker/requester-utils').createRequesterFn> | undefined;

/** gitbeaker's requester with our request handler (its options handler unchanged), made with the first client. */
function requester() {
  return (requesterFn ??= requesterUtils().createRequesterFn((_, options) => Promise.resolve(options), requestHandler));
}

/**
 * A gitbeaker client of one GitLab. Verification off is scoped to this client: gitbeaker hands `agent`
 * to fetch as its undici dispatcher, so other outgoing requests of the process still verify.
 */
export function gitlabApi(conn: GitLabConnection): GitLabApi {
  const agent = conn.verifySsl === false ? new (undici().Agent)({ connect: { rejectUnauthorized: false } }) : undefined;
  // gitbeaker types `agent` as an http.Agent but passes it to fetch as `dispatcher`, which wants an undici one.
  return new (gitbeaker().Gitlab)({
    host: conn.url.replace(/\/+$/, ''),
    token: conn.token,
    queryTimeout: conn.timeoutMs ?? 10_000,
    // Takes the place of gitbeaker's preset requester (constructor options override the preset).
    requesterFn: requester(),
    ...(agent ? { agent: agent as unknown as HttpAgent } : {}),
  } as ConstructorParameters<typeof Gitlab<false>>[0]);
}

/** What went wrong in a GitLab call: the HTTP status (none when unreachable or timed out) and GitLab's own message. */
export interface GitLabFailure {
  status?: number;
  message: string;
  timedOut: boolean;
}

/** Reads a gitbeaker (or fetch) failure; anything else (a programming error) is rethrown. */
export function gitlabFailure(err: unknown): GitLabFailure {
  // Nothing can have thrown gitbeaker's errors before the package was loaded.
  const { GitbeakerRequestError, GitbeakerTimeoutError, GitbeakerRetryError } = gitbeaker.ifLoaded() ?? {};
  if (GitbeakerRequestError && err instanceof GitbeakerRequestError) {
    return { status: err.cause?.response.status, message: err.cause?.description || err.message, timedOut: false };
  }
  if (GitbeakerTimeoutError && err instanceof GitbeakerTimeoutError) return { message: 'no answer before the timeout', timedOut: true };
  if (GitbeakerRetryError && err instanceof GitbeakerRetryError) return { status: 502, message: err.message, timedOut: false };
  // fetch rejects with TypeError('fetch failed') whose cause says why (refused, DNS, TLS).
  if (err instanceof TypeError && err.message === 'fetch failed') {
    const cause = err.cause as { code?: string; message?: string } | undefined;
    return { message: `unreachable: ${[cause?.code, cause?.message].filter(Boolean).join(' ') || err.message}`, timedOut: false };
  }
  throw err;
}

export interface GitLabIssue {
  id: number;
  iid: number;
  project_id: number;
  title: string;
  web_url: string;
  state?: string;
}

export interface GitLabOptions extends GitLabConnection {
  projectId: string;
}

/** The SRE service's incident tickets. */
export class GitLabClient {
  private readonly api: GitLabApi;

  constructor(private readonly opts: GitLabOptions) {
    this.api = gitlabApi(opts);
  }

  /**
   * The newest issue of the project whose description contains `text` (GET /projects/:id/issues
   * with search and in=description), or null: how a retry finds out whether an earlier attempt
   * created the issue although its answer was lost.
   */
  async findIssueByDescription(text: string): Promise<GitLabIssue | null> {
    let issues: Array<Partial<GitLabIssue> & { description?: string | null }>;
    try {
      const options = { projectId: this.opts.projectId, search: text, in: 'description', orderBy: 'created_at', sort: 'desc', perPage: 20, maxPages: 1 };
      issues = (await this.api.Issues.all(options as Parameters<GitLabApi['Issues']['all']>[0])) as unknown as typeof issues;
    } catch (err) {
      const failure = gitlabFailure(err);
      throw new ExternalHttpError(`GitLab GET issues ${failure.status ? `answered ${failure.status}` : 'failed'}: ${failure.message.slice(0, 300)}`, failure.status);
    }
    const found = issues.find((i) => typeof i.iid === 'number' && typeof i.web_url === 'string' && (i.description ?? '').includes(text));
    return (found as GitLabIssue | undefined) ?? null;
  }

  /**
   * Creates an issue in the configured project (POST /projects/:id/issues). Failures are
   * ExternalHttpError with GitLab's status, so callers can tell permanent (4xx) from transient ones.
   */
  async createIssue(input: { title: string; description?: string; labels?: string[]; confidential?: boolean }): Promise<GitLabIssue> {
    const body = (await this.call('POST issues', () =>
      this.api.Issues.create(this.opts.projectId, input.title, {
        description: input.description,
        labels: input.labels?.join(','),
        confidential: input.confidential,
      }),
    )) as Partial<GitLabIssue>;
    if (typeof body?.iid !== 'number' || typeof body.web_url !== 'string') throw new ExternalHttpError('GitLab answered without iid/web_url', 201);
    return body as GitLabIssue;
  }

  /** Adds a comment to an issue (POST /projects/:id/issues/:iid/notes). */
  async addNote(projectId: string, iid: number, body: string): Promise<{ id: number }> {
    return (await this.call('POST issue notes', () => this.api.IssueNotes.create(projectId, iid, body))) as { id: number };
  }

  /** Closes or reopens an issue (PUT /projects/:id/issues/:iid with state_event). */
  async setIssueState(projectId: string, iid: number, event: 'close' | 'reopen'): Promise<GitLabIssue> {
    return (await this.call('PUT issue', () => this.api.Issues.edit(projectId, iid, { stateEvent: event }))) as unknown as GitLabIssue;
  }

  /** One call; failures become ExternalHttpError with GitLab's status (permanent 4xx vs transient). */
  private async call<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      const failure = gitlabFailure(err);
      throw new ExternalHttpError(`GitLab ${what} ${failure.status ? `answered ${failure.status}` : 'failed'}: ${failure.message.slice(0, 300)}`, failure.status);
    }
  }
}

/** The issue-tracker client from ISSUE_TRACKER_*; null when the tracker is not configured. */
export function issueTracker(): GitLabClient | null {
  const { url, token, projectId } = config().sre.issueTracker;
  return url && token && projectId ? new GitLabClient({ url, token, projectId }) : null;
}
