/**
 * The Grafana dashboard of the platform itself, typed against Grafana's own dashboard schema
 * (@grafana/schema, generated from the schema Grafana validates with), so a wrong field is a type
 * error. `npm run dashboard` writes it to deploy/monitoring/switchboard-dashboard.json (import that
 * file into Grafana); a test checks the file is current and that every query parses.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Dashboard, Panel } from '@grafana/schema';

const datasource = { type: 'prometheus', uid: '${datasource}' };

function timeseries(id: number, title: string, unit: string, gridPos: Panel['gridPos'], targets: Array<{ expr: string; legend: string }>, description: string): Panel {
  return {
    id,
    type: 'timeseries',
    title,
    description,
    gridPos,
    datasource,
    fieldConfig: { defaults: { unit }, overrides: [] },
    options: { legend: { displayMode: 'list', placement: 'bottom', showLegend: true }, tooltip: { mode: 'multi', sort: 'desc' } },
    targets: targets.map((t, i) => ({ refId: String.fromCharCode(65 + i), datasource, expr: t.expr, legendFormat: t.legend })),
  };
}

function stat(id: number, title: string, unit: string, gridPos: Panel['gridPos'], expr: string, description: string): Panel {
  return {
    id,
    type: 'stat',
    title,
    description,
    gridPos,
    datasource,
    fieldConfig: { defaults: { unit }, overrides: [] },
    options: { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'value', graphMode: 'area' },
    targets: [{ refId: 'A', datasource, expr }],
  };
}

export const dashboard: Dashboard = {
  uid: 'switchboard-platform',
  title: 'Switchboard platform',
  description: 'Web and worker processes of switchboard: requests, queues, jobs, streams, outages (metrics prefixed switchboard_).',
  tags: ['switchboard'],
  editable: true,
  graphTooltip: 1,
  schemaVersion: 41,
  version: 1,
  refresh: '30s',
  time: { from: 'now-6h', to: 'now' },
  timepicker: {},
  timezone: 'browser',
  fiscalYearStartMonth: 0,
  links: [],
  annotations: { list: [] },
  templating: {
    list: [{ name: 'datasource', label: 'Prometheus', type: 'datasource', query: 'prometheus', current: { text: 'default', value: 'default' }, hide: 0, refresh: 1, options: [], skipUrlSync: false }],
  },
  panels: [
    stat(1, 'Processes up', 'none', { x: 0, y: 0, w: 4, h: 4 }, 'sum(up{job=~"switchboard.*"})', 'Web and worker processes answering scrapes.'),
    stat(2, 'Release', 'none', { x: 4, y: 0, w: 4, h: 4 }, 'count by (version) (switchboard_build_info)', 'Processes per running version (switchboard_build_info).'),
    stat(3, 'Dependency outages', 'none', { x: 8, y: 0, w: 4, h: 4 }, 'max(switchboard_dependency_outage) or vector(0)', '1 while a process sees Redis or PostgreSQL unavailable.'),
    stat(4, 'Jobs waiting', 'none', { x: 12, y: 0, w: 4, h: 4 }, 'sum(max by (queue) (switchboard_queue_jobs{state="waiting"}))', 'Jobs waiting on all queues.'),
    stat(5, 'Failed jobs kept', 'none', { x: 16, y: 0, w: 4, h: 4 }, 'sum(max by (queue) (switchboard_queue_jobs{state="failed"}))', 'Jobs that used up their retries (see /admin/queues).'),
    stat(6, 'Open SSE streams', 'none', { x: 20, y: 0, w: 4, h: 4 }, 'sum(switchboard_session_sse_streams) + sum(switchboard_sre_sse_streams)', 'Session and SRE event streams held open by the web processes.'),
    timeseries(7, 'Requests by status', 'reqps', { x: 0, y: 4, w: 12, h: 8 }, [{ expr: 'sum by (status) (rate(switchboard_http_request_duration_seconds_count[5m]))', legend: '{{status}}' }], 'API requests per second by status code.'),
    timeseries(8, 'Request latency', 's', { x: 12, y: 4, w: 12, h: 8 }, [
      { expr: 'histogram_quantile(0.5, sum by (le) (rate(switchboard_http_request_duration_seconds_bucket[5m])))', legend: 'p50' },
      { expr: 'histogram_quantile(0.99, sum by (le) (rate(switchboard_http_request_duration_seconds_bucket[5m])))', legend: 'p99' },
    ], 'Latency of API requests (SSE streams count when they end).'),
    timeseries(9, 'Queue backlog', 'none', { x: 0, y: 12, w: 12, h: 8 }, [{ expr: 'max by (queue, state) (switchboard_queue_jobs{state=~"waiting|active|delayed"})', legend: '{{queue}} {{state}}' }], 'Jobs per queue and state (every web process reports the same counts).'),
    timeseries(10, 'Jobs by outcome', 'ops', { x: 12, y: 12, w: 12, h: 8 }, [{ expr: 'sum by (queue, outcome) (rate(switchboard_queue_job_duration_seconds_count[5m]))', legend: '{{queue}} {{outcome}}' }], 'Job attempts per second by queue and outcome.'),
    timeseries(11, 'Job duration p99', 's', { x: 0, y: 20, w: 12, h: 8 }, [{ expr: 'histogram_quantile(0.99, sum by (le, job_name) (rate(switchboard_queue_job_duration_seconds_bucket[5m])))', legend: '{{job_name}}' }], 'Slowest jobs.'),
    timeseries(12, 'Webhook refusals', 'reqps', { x: 12, y: 20, w: 12, h: 8 }, [{ expr: 'sum by (route, status) (rate(switchboard_http_request_duration_seconds_count{route=~".*webhook.*", status=~"401|403"}[5m]))', legend: '{{route}} {{status}}' }], 'Webhook calls refused for a wrong secret or signature.'),
    timeseries(13, 'Memory per process', 'bytes', { x: 0, y: 28, w: 12, h: 8 }, [{ expr: 'process_resident_memory_bytes{job=~"switchboard.*"}', legend: '{{instance}}' }], 'Resident memory of each web and worker process.'),
    timeseries(14, 'Event loop lag p99', 's', { x: 12, y: 28, w: 12, h: 8 }, [{ expr: 'nodejs_eventloop_lag_p99_seconds{job=~"switchboard.*"}', legend: '{{instance}}' }], 'A busy or blocked process shows here first.'),
  ],
};

const out = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../deploy/monitoring/switchboard-dashboard.json');
/** The file's text: what `npm run dashboard` writes. */
export const dashboardText = `${JSON.stringify(dashboard, null, 2)}\n`;

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  writeFileSync(out, dashboardText);
  console.log(`wrote ${path.relative(process.cwd(), out)} (${dashboard.panels!.length} panels)`);
}
