/** The metrics system client: the Prometheus HTTP API (targets, rules, lifecycle reload) over fetch. */
import { UpstreamError } from '../errors.js';
import { parseJsonAnswer, requestText } from './http.js';

export interface PrometheusTarget {
  discoveredLabels: Record<string, string>;
  labels: Record<string, string>;
  scrapePool: string;
  scrapeUrl: string;
  lastError: string;
  health: 'up' | 'down' | 'unknown';
  scrapeInterval?: string;
  scrapeTimeout?: string;
}

export interface PrometheusRule {
  name: string;
  query: string;
  type: 'alerting' | 'recording';
  health: string;
  labels?: Record<string, string>;
  lastError?: string;
}

export interface PrometheusRuleGroup {
  name: string;
  file: string;
  rules: PrometheusRule[];
}

/** A typed client of one Prometheus server. */
export function prometheusClient(baseUrl: string, timeoutMs = 30_000) {
  const base = baseUrl.replace(/\/+$/, '');
  const call = (path: string, init: RequestInit = {}) => requestText(`Prometheus at ${base}`, base + path, { ...init, timeoutMs });
  async function data<T>(path: string): Promise<T> {
    const body = parseJsonAnswer<{ status: string; data?: T; error?: string }>(`Prometheus at ${base}`, path, (await call(path)).text);
    if (body.status !== 'success' || body.data === undefined) throw new UpstreamError(`Prometheus ${path} failed: ${body.error ?? 'no data'}`);
    return body.data;
  }
  return {
    /** Active scrape targets (GET /api/v1/targets?state=active). */
    async activeTargets(): Promise<PrometheusTarget[]> {
      return (await data<{ activeTargets: PrometheusTarget[] }>('/api/v1/targets?state=active')).activeTargets ?? [];
    },
    /** Loaded rule groups (GET /api/v1/rules). */
    async ruleGroups(): Promise<PrometheusRuleGroup[]> {
      return (await data<{ groups: PrometheusRuleGroup[] }>('/api/v1/rules')).groups ?? [];
    },
    /** Asks Prometheus to reload its configuration and rule files (needs --web.enable-lifecycle). */
    async reload(): Promise<void> {
      await call('/-/reload', { method: 'POST' });
    },
  };
}
