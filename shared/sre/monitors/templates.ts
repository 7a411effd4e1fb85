/**
 * Built-in monitoring templates per entity type. Metric names are the de-facto exporters' ones:
 * cAdvisor for containers (container_last_seen, container_start_time_seconds,
 * container_cpu_usage_seconds_total, container_memory_working_set_bytes, container_spec_memory_limit_bytes),
 * a Docker health exporter for container health (container_health_status), Prometheus' own `up`
 * for targets, Traefik's traefik_router_requests_total for routers.
 */
import type { EntityType } from '../cmdb/model.js';
import type { AlertingRule } from './rules.js';

export interface TemplateEntity {
  id: string;
  type: EntityType;
  name: string;
  natural_key: string;
  attributes: Record<string, unknown>;
}

export interface TemplateRecommendation {
  template: string;
  rule: AlertingRule;
  rationale: string;
}

/** A PromQL string literal. */
const q = (value: string) => JSON.stringify(value);

type Template = (e: TemplateEntity) => TemplateRecommendation | null;

const container: Template[] = [
  (e) => ({
    template: 'container_down',
    rationale: 'A container that stops reporting is down.',
    rule: { alert: 'ContainerDown', expr: `time() - max(container_last_seen{name=${q(e.name)}}) > 60`, for: '1m', labels: { severity: 'critical' }, annotations: { summary: `Container ${e.name} is down` } },
  }),
  (e) => ({
    template: 'container_restarting',
    rationale: 'Repeated restarts point at a crash loop.',
    rule: { alert: 'ContainerRestarting', expr: `changes(container_start_time_seconds{name=${q(e.name)}}[15m]) > 2`, labels: { severity: 'warning' }, annotations: { summary: `Container ${e.name} restarted more than twice in 15 minutes` } },
  }),
  (e) => {
    return e.attributes.healthcheck === true
      ? {
          template: 'container_unhealthy',
          rationale: 'The runtime reports the container unhealthy when its health check fails.',
          rule: { alert: 'ContainerUnhealthy', expr: `max(container_health_status{name=${q(e.name)},status="unhealthy"}) == 1`, for: '2m', labels: { severity: 'warning' }, annotations: { summary: `Container ${e.name} is unhealthy` } },
        }
      : null;
  },
  (e) => ({
    template: 'container_high_cpu',
    rationale: 'Sustained CPU above 90 % of one core starves the container.',
    rule: { alert: 'ContainerHighCpu', expr: `sum(rate(container_cpu_usage_seconds_total{name=${q(e.name)}}[5m])) > 0.9`, for: '10m', labels: { severity: 'warning' }, annotations: { summary: `Container ${e.name} uses more than 90% CPU` } },
  }),
  (e) => ({
    template: 'container_high_memory',
    rationale: 'Memory above 90 % of the limit precedes an out-of-memory kill.',
    rule: {
      alert: 'ContainerHighMemory',
      expr: `max(container_memory_working_set_bytes{name=${q(e.name)}}) / max(container_spec_memory_limit_bytes{name=${q(e.name)}} > 0) > 0.9`,
      for: '5m',
      labels: { severity: 'warning' },
      annotations: { summary: `Container ${e.name} uses more than 90% of its memory limit` },
    },
  }),
];

const byType: Partial<Record<EntityType, Template[]>> = {
  container,
  scrape_target: [
    (e) => ({
      template: 'target_down',
      rationale: 'A target Prometheus cannot scrape is down or unreachable.',
      rule: {
        alert: 'ScrapeTargetDown',
        expr: `up{job=${q(String(e.attributes.job ?? ''))},instance=${q(String(e.attributes.instance ?? e.name))}} == 0`,
        for: '2m',
        labels: { severity: 'critical' },
        annotations: { summary: `Target ${e.name} of job ${String(e.attributes.job ?? '')} is down` },
      },
    }),
  ],
  router: [
    (e) => ({
      template: 'router_5xx_ratio',
      rationale: 'More than 5 % server errors on a router means its backends are failing.',
      rule: {
        alert: 'Router5xxRatioHigh',
        expr: `sum(rate(traefik_router_requests_total{router=${q(e.name)},code=~"5.."}[5m])) / sum(rate(traefik_router_requests_total{router=${q(e.name)}}[5m])) > 0.05`,
        for: '5m',
        labels: { severity: 'warning' },
        annotations: { summary: `Router ${e.name} answers more than 5% 5xx` },
      },
    }),
  ],
};

/** The built-in recommendations for an entity (none for types without templates). */
export function templateRecommendations(entity: TemplateEntity): TemplateRecommendation[] {
  return (byType[entity.type] ?? []).map((t) => t(entity)).filter((r): r is TemplateRecommendation => r !== null);
}
