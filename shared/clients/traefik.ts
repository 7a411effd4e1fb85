/** The reverse proxy client: the Traefik API (HTTP routers and services) over fetch, following its pagination. */
import { UpstreamError } from '../errors.js';
import { parseJsonAnswer, requestText } from './http.js';

export interface TraefikRouter {
  name: string;
  provider?: string;
  rule?: string;
  service?: string;
  entryPoints?: string[];
  status?: 'enabled' | 'disabled' | 'warning' | string;
}

export interface TraefikService {
  name: string;
  provider?: string;
  type?: string;
  status?: string;
  loadBalancer?: { servers?: Array<{ url?: string; address?: string }> };
  serverStatus?: Record<string, string>;
}

/** A typed client of one Traefik API. */
export function traefikClient(baseUrl: string, timeoutMs = 30_000) {
  const base = baseUrl.replace(/\/+$/, '');
  const perPage = 500;
  /** Every page of a list: Traefik answers X-Next-Page with the next page number, or 1 on the last page. */
  async function all<T>(path: string): Promise<T[]> {
    const items: T[] = [];
    for (let page = 1; ; ) {
      const res = await requestText(`Traefik API at ${base}`, `${base}${path}?page=${page}&per_page=${perPage}`, { timeoutMs });
      const body = parseJsonAnswer<T[]>(`Traefik API at ${base}`, path, res.text);
      if (!Array.isArray(body)) throw new UpstreamError(`Traefik GET ${path} did not answer a list`);
      items.push(...body);
      const next = Number(res.headers.get('X-Next-Page') ?? 0);
      if (!(next > page) || body.length === 0) return items;
      page = next;
    }
  }
  return {
    routers: () => all<TraefikRouter>('/api/http/routers'),
    services: () => all<TraefikService>('/api/http/services'),
  };
}
