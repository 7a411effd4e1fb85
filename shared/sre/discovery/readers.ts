/**
 * What each source kind yields: the external system's JSON turned into entities. Pure functions,
 * so the rules (health from "(healthy)", hostnames from Host(`…`), …) read and test in one place.
 */
import { parse as parseYaml } from 'yaml';
import type { ContainerSummary } from '../../clients/docker.js';
import type { PrometheusTarget } from '../../clients/prometheus.js';
import type { TraefikRouter, TraefikService } from '../../clients/traefik.js';
import { groupHealth, hostAndPort, sorted, type DiscoveredEntity, type Health } from '../cmdb/cmdb.schemas.js';

const composeProject = 'com.docker.compose.project';
const composeService = 'com.docker.compose.service';

/** A container's health from its state and status text ("Up 2 hours (healthy)", "(unhealthy)", "(health: starting)"). */
export function containerHealth(state: string, status: string): Health {
  switch (state) {
    case 'running':
      if (/\(unhealthy\)/.test(status)) return 'unhealthy';
      if (/\(health: starting\)/.test(status)) return 'unknown';
      return 'healthy';
    case 'restarting':
      return 'unhealthy';
    case 'exited':
    case 'dead':
      return 'down';
    default:
      return 'unknown';
  }
}

/** Containers and their compose projects. */
export function readContainers(containers: ContainerSummary[]): DiscoveredEntity[] {
  const out: DiscoveredEntity[] = [];
  const projects = new Map<string, { services: Set<string>; health: Health[] }>();
  for (const c of containers) {
    const name = (c.Names?.[0] ?? c.Id).replace(/^\//, '');
    const labels = c.Labels ?? {};
    const project = labels[composeProject];
    const service = labels[composeService];
    const networks = c.NetworkSettings?.Networks ?? {};
    const ips = Object.values(networks).map((n) => n.IPAddress).filter((ip): ip is string => !!ip);
    const aliases = Object.values(networks).flatMap((n) => n.Aliases ?? []);
    const hosts = sorted([...ips, name, ...(service ? [service] : []), ...aliases]);
    const privatePorts = sorted((c.Ports ?? []).map((p) => p.PrivatePort));
    // Addresses by which a proxy server or a scrape target can name this container.
    const addresses = sorted([
      ...hosts,
      ...hosts.flatMap((h) => privatePorts.map((p) => `${h}:${p}`)),
      ...(c.Ports ?? []).filter((p) => p.PublicPort).flatMap((p) =>
        !p.IP || p.IP === '0.0.0.0' || p.IP === '::' ? [`127.0.0.1:${p.PublicPort}`, `localhost:${p.PublicPort}`] : [`${p.IP}:${p.PublicPort}`],
      ),
    ]);
    const health = containerHealth(c.State, c.Status ?? '');
    out.push({
      type: 'container',
      natural_key: name,
      name,
      health,
      attributes: {
        container_id: c.Id,
        image: c.Image,
        state: c.State,
        // The status text carries "(healthy)", "(unhealthy)" or "(health: starting)" only when a health check is defined.
        healthcheck: /\((healthy|unhealthy|health: [a-z]+)\)/.test(c.Status ?? ''),
        ...(project ? { compose_project: project } : {}),
        ...(service ? { compose_service: service } : {}),
        labels,
        ports: sorted((c.Ports ?? []).map((p) => `${p.IP ? `${p.IP}:` : ''}${p.PublicPort ? `${p.PublicPort}->` : ''}${p.PrivatePort}/${p.Type}`)),
        addresses,
      },
    });
    if (project) {
      const entry = projects.get(project) ?? { services: new Set(), health: [] };
      if (service) entry.services.add(service);
      entry.health.push(health);
      projects.set(project, entry);
    }
  }
  for (const [project, entry] of projects) {
    out.push({
      type: 'compose_project',
      natural_key: project,
      name: project,
      health: groupHealth(entry.health),
      attributes: { services: sorted(entry.services), containers: entry.health.length },
    });
  }
  return out;
}

const targetHealth: Record<string, Health> = { up: 'healthy', down: 'down', unknown: 'unknown' };

/** A scrape job as configured (scrape_configs of the Prometheus configuration). */
export interface ScrapeJobConfig {
  job_name: string;
  scrape_interval: string | null;
  scrape_timeout: string | null;
  metrics_path: string;
  scheme: string;
  /** How targets are found: `static` and/or the service-discovery kinds (`file`, `kubernetes`, …). */
  discovery: string[];
  /** Targets listed in static_configs (a job may list none and find them by service discovery, or have none yet). */
  static_targets: string[];
}

/**
 * Scrape jobs of a Prometheus configuration (the YAML of /api/v1/status/config). Global scrape
 * interval and timeout apply where a job sets none (Prometheus fills them in already; older
 * versions may not).
 */
export function readScrapeConfig(yamlText: string): ScrapeJobConfig[] {
  // Merge keys (<<) as Prometheus's YAML reader (go-yaml) accepts them.
  const doc = (parseYaml(yamlText, { merge: true }) ?? {}) as { global?: Record<string, unknown>; scrape_configs?: Array<Record<string, unknown>> };
  const global = doc.global ?? {};
  const text = (v: unknown) => (typeof v === 'string' && v ? v : null);
  return (doc.scrape_configs ?? [])
    .filter((c) => typeof c?.job_name === 'string' && c.job_name)
    .map((c) => {
      const statics = Array.isArray(c.static_configs) ? (c.static_configs as Array<{ targets?: unknown }>) : [];
      const sd = Object.keys(c).filter((k) => k.endsWith('_sd_configs')).map((k) => k.slice(0, -'_sd_configs'.length));
      return {
        job_name: c.job_name as string,
        scrape_interval: text(c.scrape_interval) ?? text(global.scrape_interval),
        scrape_timeout: text(c.scrape_timeout) ?? text(global.scrape_timeout),
        metrics_path: text(c.metrics_path) ?? '/metrics',
        scheme: text(c.scheme) ?? 'http',
        discovery: sorted([...(statics.length ? ['static'] : []), ...sd]),
        static_targets: sorted(statics.flatMap((sc) => (Array.isArray(sc.targets) ? sc.targets.filter((t): t is string => typeof t === 'string') : []))),
      };
    });
}

/**
 * Scrape targets and their jobs. Jobs come from the configuration (so a job without any target yet
 * is an entity too, health unknown) and from the active targets' scrape pools (a job the
 * configuration did not list, e.g. when it could not be read).
 */
export function readTargets(targets: PrometheusTarget[], configured: ScrapeJobConfig[] = []): DiscoveredEntity[] {
  const out: DiscoveredEntity[] = [];
  const jobs = new Map<string, { health: Health[]; sample: PrometheusTarget }>();
  for (const t of targets) {
    const job = t.scrapePool || t.labels.job || 'unknown';
    const instance = t.labels.instance ?? t.discoveredLabels.__address__ ?? t.scrapeUrl;
    const address = hostAndPort(t.discoveredLabels.__address__ ?? instance);
    const health = targetHealth[t.health] ?? 'unknown';
    out.push({
      type: 'scrape_target',
      natural_key: `${job}|${t.scrapeUrl}`,
      name: instance,
      health,
      attributes: {
        job,
        instance,
        scrape_url: t.scrapeUrl,
        labels: t.labels,
        ...(address ? { host: address.host, endpoint: address.endpoint } : {}),
        last_error: t.lastError ?? '',
      },
    });
    const entry = jobs.get(job) ?? { health: [], sample: t };
    entry.health.push(health);
    jobs.set(job, entry);
  }
  const byName = new Map(configured.map((c) => [c.job_name, c]));
  for (const name of sorted([...byName.keys(), ...jobs.keys()])) {
    const config = byName.get(name);
    const active = jobs.get(name);
    const d = active?.sample.discoveredLabels ?? {};
    out.push({
      type: 'scrape_job',
      natural_key: name,
      name,
      health: groupHealth(active?.health ?? []),
      attributes: {
        scrape_interval: config?.scrape_interval ?? active?.sample.scrapeInterval ?? d.__scrape_interval__ ?? null,
        scrape_timeout: config?.scrape_timeout ?? active?.sample.scrapeTimeout ?? d.__scrape_timeout__ ?? null,
        metrics_path: config?.metrics_path ?? d.__metrics_path__ ?? '/metrics',
        scheme: config?.scheme ?? d.__scheme__ ?? 'http',
        targets: active?.health.length ?? 0,
        configured: config !== undefined,
        ...(config ? { discovery: config.discovery, static_targets: config.static_targets } : {}),
      },
    });
  }
  return out;
}

/** Hostnames named by Host(`a`, `b`) matchers of a router rule (HostRegexp and HostSNI are not hostnames). */
export function hostnamesOf(rule: string | undefined): string[] {
  if (!rule) return [];
  const names: string[] = [];
  for (const match of rule.matchAll(/(?<![A-Za-z])Host\(([^)]*)\)/g)) {
    for (const quoted of match[1]!.matchAll(/[`"]([^`"]+)[`"]/g)) names.push(quoted[1]!.toLowerCase());
  }
  return sorted(names);
}

const qualified = (name: string, provider: string | undefined) => (name.includes('@') || !provider ? name : `${name}@${provider}`);
const routerHealth: Record<string, Health> = { enabled: 'healthy', warning: 'degraded', disabled: 'unhealthy' };

/** Routers, services and hostnames of the reverse proxy. */
export function readProxy(routers: TraefikRouter[], services: TraefikService[]): DiscoveredEntity[] {
  const out: DiscoveredEntity[] = [];
  const hostnames = new Map<string, { routers: string[]; health: Health[] }>();
  for (const r of routers) {
    const hosts = hostnamesOf(r.rule);
    const health = routerHealth[r.status ?? 'enabled'] ?? 'unknown';
    out.push({
      type: 'router',
      natural_key: r.name,
      name: r.name,
      health,
      attributes: {
        provider: r.provider ?? null,
        rule: r.rule ?? '',
        ...(r.service ? { service: qualified(r.service, r.provider) } : {}),
        entry_points: sorted(r.entryPoints ?? []),
        hostnames: hosts,
        status: r.status ?? null,
      },
    });
    for (const h of hosts) {
      const entry = hostnames.get(h) ?? { routers: [], health: [] };
      entry.routers.push(r.name);
      entry.health.push(health);
      hostnames.set(h, entry);
    }
  }
  for (const s of services) {
    const servers = sorted((s.loadBalancer?.servers ?? []).map((v) => v.url ?? v.address ?? '').filter(Boolean));
    const addresses = servers.map(hostAndPort).filter((a): a is NonNullable<typeof a> => !!a);
    const statuses = Object.values(s.serverStatus ?? {});
    const health: Health = statuses.length
      ? groupHealth(statuses.map((v) => (v === 'UP' ? 'healthy' : 'down')))
      : s.status === 'disabled' ? 'unhealthy' : s.status === 'warning' ? 'degraded' : 'unknown';
    out.push({
      type: 'proxy_service',
      natural_key: s.name,
      name: s.name,
      health,
      attributes: {
        provider: s.provider ?? null,
        kind: s.type ?? null,
        servers,
        server_addresses: sorted(addresses.flatMap((a) => [a.endpoint, a.host])),
        server_status: s.serverStatus ?? {},
        status: s.status ?? null,
      },
    });
  }
  for (const [host, entry] of hostnames) {
    out.push({ type: 'hostname', natural_key: host, name: host, health: groupHealth(entry.health), attributes: { routers: sorted(entry.routers) } });
  }
  return out;
}
