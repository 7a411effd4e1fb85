/**
 * n8n (workflow automation) over fetch: workflows started through their Webhook node's URL, and the
 * public REST API's GET /api/v1/executions/{id} to follow them. Every call carries the API key in
 * both x-automation-api-key (the platform's convention) and n8n's own X-N8N-API-KEY, and therefore
 * goes only to AUTOMATION_URL: a URL outside it is refused before anything is sent.
 */
import { config } from '../config.js';
import { AppError } from '../errors.js';
import { ExternalHttpError, requestText } from './http.js';

/** A workflow target outside the configured automation system (or none is configured): never called. */
export class ForeignTargetError extends AppError {}

/**
 * The absolute URL of a workflow target: a path (`/webhook/restart-service`, resolved under AUTOMATION_URL)
 * or an absolute URL that lies under AUTOMATION_URL (same origin, below its path). Throws ForeignTargetError otherwise.
 */
export function workflowUrl(target: string, base = config().sre.automation.url, options: { webhookOnly?: boolean } = {}): string {
  if (!base) throw new ForeignTargetError('AUTOMATION_URL is not configured, so no workflow can be called.');
  const root = new URL(base);
  const rootPath = root.pathname.replace(/\/+$/, '');
  let url: URL;
  try {
    url = target.startsWith('/') && !target.startsWith('//') ? new URL(rootPath + target, root.origin) : new URL(target);
  } catch {
    throw new ForeignTargetError('is neither a path nor a URL.');
  }
  // The URL parser has already resolved dot segments, so a prefix check on the path is a real containment check.
  const inside = url.origin === root.origin && !url.username && !url.password && (url.pathname === rootPath || url.pathname.startsWith(`${rootPath}/`));
  if (!inside) throw new ForeignTargetError(`must be on the automation system: a path, or a URL under AUTOMATION_URL (${root.origin}${rootPath}/).`);
  // What is started with the API key is a workflow's webhook, never another REST path of the automation API (its audit, users…).
  if (options.webhookOnly && !/^\/webhook(-test)?\/[^/]/.test(url.pathname.slice(rootPath.length))) {
    throw new ForeignTargetError(`must be a workflow webhook: /webhook/<path> (or /webhook-test/<path>) under AUTOMATION_URL (${root.origin}${rootPath}/).`);
  }
  return url.toString();
}

/** Largest workflow answer kept as an execution's result (serialized JSON); larger ones are kept as a marker with their size. */
export const maxResultBytes = 16 * 1024;

/** A workflow's answer as it may be stored: as is when small, else a marker with its size (the full answer is logged, not stored). */
export function boundedResult(body: unknown): unknown {
  const text = JSON.stringify(body ?? null);
  const bytes = Buffer.byteLength(text, 'utf8');
  return bytes <= maxResultBytes ? body : { truncated: true, bytes, note: `the answer exceeded ${maxResultBytes} bytes and was not stored` };
}

/** n8n execution status values (public API 1.1). */
export type N8nExecutionStatus = 'canceled' | 'crashed' | 'error' | 'new' | 'running' | 'success' | 'unknown' | 'waiting';

export interface N8nExecution {
  id: number | string;
  finished: boolean;
  mode?: string;
  startedAt?: string | null;
  stoppedAt?: string | null;
  workflowId?: string | number;
  status?: N8nExecutionStatus;
}

/** A workflow as GET /api/v1/workflows lists it (public API 1.1; only the fields we read). */
export interface N8nWorkflow {
  id: string;
  name: string;
  active: boolean;
  tags?: Array<{ id?: string; name: string }>;
  nodes?: Array<{ name?: string; type: string; webhookId?: string; notes?: string; parameters?: { path?: string; httpMethod?: string } }>;
  updatedAt?: string;
}

export interface WebhookAnswer {
  status: number;
  /** The execution id when the workflow answers with one ("Respond to Webhook" returning {{$execution.id}}). */
  executionId: string | null;
  body: unknown;
}

export class N8nClient {
  constructor(private readonly opts: { url?: string; apiKey?: string; timeoutMs?: number }) {}

  private headers(): Record<string, string> {
    return this.opts.apiKey ? { 'x-automation-api-key': this.opts.apiKey, 'X-N8N-API-KEY': this.opts.apiKey } : {};
  }

  private async send(target: string, init: RequestInit, options: { webhookOnly?: boolean } = {}): Promise<{ status: number; body: unknown }> {
    // Checked here, where the key is attached, so no caller can send it elsewhere.
    const url = workflowUrl(target, this.opts.url, options);
    const { status, text } = await requestText('n8n', url, {
      ...init,
      headers: { Accept: 'application/json', ...this.headers(), ...(init.headers as Record<string, string>) },
      timeoutMs: this.opts.timeoutMs ?? 15_000,
    });
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // Webhook workflows may answer plain text; keep it as is.
    }
    return { status, body };
  }

  /** Starts a workflow through its webhook (a path or a URL under AUTOMATION_URL; POST, JSON body). */
  async triggerWebhook(webhookUrl: string, payload: unknown): Promise<WebhookAnswer> {
    const { status, body } = await this.send(webhookUrl, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(payload) }, { webhookOnly: true });
    const first = Array.isArray(body) ? body[0] : body;
    const id = first && typeof first === 'object' ? ((first as Record<string, unknown>).executionId ?? (first as Record<string, unknown>).execution_id) : undefined;
    return { status, executionId: id === undefined || id === null ? null : String(id), body };
  }

  /**
   * The execution of a workflow whose data carries `marker` (our execution id, sent in the webhook
   * body), from GET /api/v1/executions?workflowId=…&includeData=true (the most recent page), or
   * null: how a retry finds out whether an earlier call started the workflow although its answer
   * was lost.
   */
  async findExecution(workflowId: string, marker: string): Promise<N8nExecution | null> {
    if (!this.opts.url) throw new ExternalHttpError('AUTOMATION_URL is not configured');
    const query = new URLSearchParams({ workflowId, includeData: 'true', limit: '100' });
    const { body } = await this.send(`${this.opts.url.replace(/\/+$/, '')}/api/v1/executions?${query}`, { method: 'GET' });
    const list = (body as { data?: unknown })?.data;
    if (!Array.isArray(list)) throw new ExternalHttpError('n8n answered the execution list without data');
    return (list.find((e) => JSON.stringify((e as { data?: unknown }).data ?? null).includes(marker)) as N8nExecution | undefined) ?? null;
  }

  private apiUrl(path: string): string {
    if (!this.opts.url) throw new ExternalHttpError('AUTOMATION_URL is not configured');
    return `${this.opts.url.replace(/\/+$/, '')}${path}`;
  }

  /** GET /api/v1/executions?limit=… (newest first): one page. */
  async listExecutions(limit: number): Promise<N8nExecution[]> {
    const { body } = await this.send(this.apiUrl(`/api/v1/executions?limit=${limit}`), { method: 'GET' });
    return ((body as { data?: N8nExecution[] } | null)?.data ?? []) as N8nExecution[];
  }

  /** One page of GET /api/v1/workflows (filtered by active and tag names). */
  async listWorkflows(q: { active?: boolean; tags?: string; limit?: number; cursor?: string }): Promise<{ data: N8nWorkflow[]; nextCursor: string | null }> {
    if (!this.opts.url) throw new ExternalHttpError('AUTOMATION_URL is not configured');
    const params = new URLSearchParams();
    if (q.active !== undefined) params.set('active', String(q.active));
    if (q.tags) params.set('tags', q.tags);
    if (q.limit) params.set('limit', String(q.limit));
    if (q.cursor) params.set('cursor', q.cursor);
    const { body } = await this.send(`${this.opts.url.replace(/\/+$/, '')}/api/v1/workflows?${params}`, { method: 'GET' });
    const page = body as { data?: N8nWorkflow[]; nextCursor?: string | null };
    return { data: Array.isArray(page?.data) ? page.data : [], nextCursor: page?.nextCursor ?? null };
  }

  /**
   * The production webhook URL of a webhook path, always under the automation base URL (the API key
   * travels with the call, so it must never go elsewhere); null for a path that would leave it.
   */
  webhookUrl(path: string): string | null {
    if (!this.opts.url) return null;
    const segments = path.replace(/^\/+/, '').split('/');
    if (!segments.length || segments.some((s) => s === '' || s === '.' || s === '..')) return null;
    const base = `${this.opts.url.replace(/\/+$/, '')}/webhook/`;
    const url = new URL(base + segments.map(encodeURIComponent).join('/'));
    return url.href.startsWith(new URL(base).href) ? url.href : null;
  }

  /** GET /api/v1/executions/{id} of the automation API. */
  async getExecution(id: string): Promise<N8nExecution> {
    if (!this.opts.url) throw new ExternalHttpError('AUTOMATION_URL is not configured');
    const { body } = await this.send(`/api/v1/executions/${encodeURIComponent(id)}`, { method: 'GET' });
    return body as N8nExecution;
  }
}

/** The automation client from AUTOMATION_URL / AUTOMATION_API_KEY. */
export function automation(): N8nClient {
  const { url, apiKey } = config().sre.automation;
  return new N8nClient({ url, apiKey: apiKey || undefined });
}
