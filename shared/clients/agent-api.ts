/**
 * The agent API the portal reads conversation history from (spec 002 § Queries the portal makes):
 * GET /sessions?user_id=…&limit=…, GET /sessions/{session_id}, and GET /api/health as the
 * connectivity check, each with X-API-Key. AGENT_API_URL defaults to this platform.
 */
import { config } from '../config.js';
import { requestText } from './http.js';

export interface AgentSessionRow {
  session_id: string;
  user_id: string;
  status: string;
  channel: string | null;
  created_at: string;
  last_activity: string;
  closed_at: string | null;
  message_count: number;
  summary: string | null;
}

export interface AgentSessionDetail extends AgentSessionRow {
  messages: Array<{ role: string; content: string; channel?: string }>;
}

export class AgentApiClient {
  constructor(private readonly opts: { url: string; apiKey: string; timeoutMs?: number }) {}

  private async get<T>(path: string): Promise<T> {
    const { text } = await requestText('agent API', `${this.opts.url.replace(/\/+$/, '')}${path}`, {
      method: 'GET',
      headers: { Accept: 'application/json', 'X-API-Key': this.opts.apiKey },
      timeoutMs: this.opts.timeoutMs ?? 10_000,
    });
    return JSON.parse(text) as T;
  }

  async listSessions(userId: string, limit: number): Promise<AgentSessionRow[]> {
    return (await this.get<{ sessions: AgentSessionRow[] }>(`/sessions?user_id=${encodeURIComponent(userId)}&limit=${limit}`)).sessions;
  }

  getSession(sessionId: string): Promise<AgentSessionDetail> {
    return this.get<AgentSessionDetail>(`/sessions/${encodeURIComponent(sessionId)}`);
  }

  async health(): Promise<unknown> {
    return this.get('/api/health');
  }
}

/** The client from AGENT_API_URL (default PUBLIC_URL) and AGENT_API_KEY (default the first of API_KEYS). */
export function agentApi(): AgentApiClient {
  const cfg = config();
  return new AgentApiClient({ url: cfg.portal.agentApiUrl ?? cfg.publicUrl, apiKey: cfg.portal.agentApiKey || cfg.auth.apiKeys[0] || '' });
}
