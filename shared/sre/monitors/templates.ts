/**
 * Built-in monitoring templates for every entity type discovery creates. Metric names are the
 * de-facto exporters' ones, and each template names its exporter (templateCatalog, served in the
 * API reference): cAdvisor for containers and compose projects (container_last_seen,
 * container_start_time_seconds, container_cpu_usage_seconds_total, container_memory_working_set_bytes,
 * container_spec_memory_limit_bytes, container labels as container_label_*), a Docker health
 * exporter for container health (container_health_status), Prometheus' own `up` for targets and
 * jobs, Traefik's metrics for routers and services, the blackbox exporter's probes for hostnames.
 */
import type { EntityType } from '../cmdb/cmdb.schemas.js';
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

/** What a template watches, for the reference: its entity type, alert, exporter and metrics. */
export interface TemplateInfo {
  entity_type: EntityType;
  template: string;
  alert: string;
  exporter: string;
  metrics: string[];
  condition?: string;
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

const byType: Record<EntityType, Template[]> = {
  container,
  compose_project: [
    (e) => {
      const expected = Number(e.attributes.containers ?? 0);
      return expected > 0
        ? {
            template: 'compose_containers_missing',
            rationale: 'Fewer of the project\'s containers reporting than discovery found means a service is down.',
            rule: {
              alert: 'ComposeContainersMissing',
              expr: `(count(time() - container_last_seen{container_label_com_docker_compose_project=${q(e.name)}} < 60) or vector(0)) < ${expected}`,
              for: '2m',
              labels: { severity: 'warning' },
              annotations: { summary: `Compose project ${e.name} has fewer than ${expected} containers running` },
            },
          }
        : null;
    },
  ],
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
  scrape_job: [
    (e) => ({
      template: 'job_no_target_up',
      rationale: 'A job with no target up (or no target at all) collects nothing: every alert built on its metrics goes silent.',
      rule: {
        alert: 'ScrapeJobNoTargetUp',
        expr: `absent(up{job=${q(e.name)}} == 1)`,
        for: '5m',
        labels: { severity: 'critical' },
        annotations: { summary: `No target of job ${e.name} is up` },
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
  proxy_service: [
    (e) => {
      const servers = Array.isArray(e.attributes.servers) ? e.attributes.servers.length : 0;
      return servers > 0
        ? {
            template: 'proxy_service_no_server_up',
            rationale: 'A load balancer with no healthy server answers every request with an error.',
            rule: {
              alert: 'ProxyServiceNoServerUp',
              expr: `max(traefik_service_server_up{service=${q(e.name)}}) == 0`,
              for: '1m',
              labels: { severity: 'critical' },
              annotations: { summary: `No server of proxy service ${e.name} is up` },
            },
          }
        : null;
    },
  ],
  hostname: [
    (e) => ({
      template: 'hostname_probe_failed',
      rationale: 'The public name must answer; a failing HTTP probe is what users see.',
      rule: {
        alert: 'HostnameProbeFailed',
        expr: `max(probe_success{instance=~${q(`(https?://)?${e.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(:[0-9]+)?(/.*)?`)}}) == 0`,
        for: '2m',
        labels: { severity: 'critical' },
        annotations: { summary: `Probes of ${e.name} fail` },
      },
    }),
  ],
};

/** The built-in recommendations for an entity. */
export function templateRecommendations(entity: TemplateEntity): TemplateRecommendation[] {
  return (byType[entity.type] ?? []).map((t) => t(entity)).filter((r): r is TemplateRecommendation => r !== null);
}

const cadvisor = 'cAdvisor (google/cadvisor)';
/** Every built-in template with the exporter whose metrics it uses (served by GET /api/v1/cmdb/monitor-templates). */
export const templateCatalog: TemplateInfo[] = [
  { entity_type: 'container', template: 'container_down', alert: 'ContainerDown', exporter: cadvisor, metrics: ['container_last_seen'] },
  { entity_type: 'container', template: 'container_restarting', alert: 'ContainerRestarting', exporter: cadvisor, metrics: ['container_start_time_seconds'] },
  { entity_type: 'container', template: 'container_unhealthy', alert: 'ContainerUnhealthy', exporter: 'a Docker health-status exporter (e.g. docker-state-exporter)', metrics: ['container_health_status'], condition: 'the container defines a health check' },
  { entity_type: 'container', template: 'container_high_cpu', alert: 'ContainerHighCpu', exporter: cadvisor, metrics: ['container_cpu_usage_seconds_total'] },
  { entity_type: 'container', template: 'container_high_memory', alert: 'ContainerHighMemory', exporter: cadvisor, metrics: ['container_memory_working_set_bytes', 'container_spec_memory_limit_bytes'] },
  { entity_type: 'compose_project', template: 'compose_containers_missing', alert: 'ComposeContainersMissing', exporter: cadvisor, metrics: ['container_last_seen (label container_label_com_docker_compose_project)'], condition: 'discovery found at least one container' },
  { entity_type: 'scrape_target', template: 'target_down', alert: 'ScrapeTargetDown', exporter: 'Prometheus itself (the synthetic `up` series of every scrape)', metrics: ['up'] },
  { entity_type: 'scrape_job', template: 'job_no_target_up', alert: 'ScrapeJobNoTargetUp', exporter: 'Prometheus itself (the synthetic `up` series of every scrape)', metrics: ['up'] },
  { entity_type: 'router', template: 'router_5xx_ratio', alert: 'Router5xxRatioHigh', exporter: 'Traefik (metrics.prometheus, addRoutersLabels: true)', metrics: ['traefik_router_requests_total'] },
  { entity_type: 'proxy_service', template: 'proxy_service_no_server_up', alert: 'ProxyServiceNoServerUp', exporter: 'Traefik (metrics.prometheus, addServicesLabels: true)', metrics: ['traefik_service_server_up'], condition: 'the service has servers (load balancer)' },
  { entity_type: 'hostname', template: 'hostname_probe_failed', alert: 'HostnameProbeFailed', exporter: 'blackbox_exporter (an http probe job whose instance is the hostname or its URL)', metrics: ['probe_success'] },
];
