/**
 * n8n (workflow automation) over fetch: workflows started through their Webhook node's URL, and the
 * public REST API's GET /api/v1/executions/{id} to follow them. Every call carries the API key in
 * both x-automation-api-key (the platform's convention) and n8n's own X-N8N-API-KEY.
 */
import { config } from '../config.js';
import { ExternalHttpError, requestText } from './http.js';

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

  private async send(url: string, init: RequestInit): Promise<{ status: number; body: unknown }> {
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

  /** Starts a workflow through its webhook URL (POST, JSON body). */
  async triggerWebhook(webhookUrl: string, payload: unknown): Promise<WebhookAnswer> {
    const { status, body } = await this.send(webhookUrl, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(payload) });
    const first = Array.isArray(body) ? body[0] : body;
    const id = first && typeof first === 'object' ? ((first as Record<string, unknown>).executionId ?? (first as Record<string, unknown>).execution_id) : undefined;
    return { status, executionId: id === undefined || id === null ? null : String(id), body };
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
    const { body } = await this.send(`${this.opts.url.replace(/\/+$/, '')}/api/v1/executions/${encodeURIComponent(id)}`, { method: 'GET' });
    return body as N8nExecution;
  }
}

/** The automation client from AUTOMATION_URL / AUTOMATION_API_KEY. */
export function automation(): N8nClient {
  const { url, apiKey } = config().sre.automation;
  return new N8nClient({ url, apiKey: apiKey || undefined });
}
