/**
 * GET /api/v1/sre/events: the live SRE events (alerts, incidents, discovery, runbook executions) as
 * server-sent events, for the console's dashboards. Every stream of a process shares the process's
 * one bus subscriber (shared/bus.ts); nothing is replayed: a reconnecting view refetches.
 */
import type { Context } from 'koa';
import client from 'prom-client';
import { ApiRouter } from '../../routing.js';
import { metricsRegistry, metricPrefix } from '../../../shared/metrics.js';
import { sreEventTypes, subscribeSreEvents, type SreEvent, type SreEventType } from '../../../shared/sre/events.js';
import { streamBusEvents } from '../../event-stream.js';
import { sreEvent, sreEventQuery } from './events.schemas.js';

const openStreams = new client.Gauge({ name: `${metricPrefix}sre_sse_streams`, help: 'Open SRE event SSE streams in this process', registers: [metricsRegistry] });

/** Streams SRE events (of `types`, or all) to the response until either side ends. */
export function streamSreEvents(ctx: Context, types: SreEventType[] | undefined): Promise<void> {
  return streamBusEvents<SreEvent>(ctx, subscribeSreEvents, types, openStreams);
}

export function sreEventRoutes(): ApiRouter {
  return new ApiRouter().route({
    method: 'get',
    path: '/api/v1/sre/events',
    tags: ['sre events'],
    summary: 'Live SRE events (server-sent events)',
    description:
      'One `data:` line per event with the JSON {id, type, at, data}; `id:` is the event id. Types: ' +
      `${sreEventTypes.join(', ')}. ` +
      '`alert.fired`/`alert.changed` from ingestion carry {source, opened, updated, resolved, fingerprints}; from acknowledge/resolve {id, fingerprint, status, by}. ' +
      '`incident.opened` {id} or {ids}; `incident.changed` {id or ids, change: status | timeline | alerts | escalated, …}; `discovery.started` {run_id, trigger}; ' +
      '`discovery.finished` {run_id, status, counts, errors}; `runbook_execution.changed` {id or ids, runbook_id, from, status}. ' +
      'Events are published after the change is committed, so a refetch on receipt sees it. No replay: a client that reconnects refetches what it shows. ' +
      'Keep-alive comments every SESSION_SSE_KEEPALIVE_SECONDS. A client that does not keep up is disconnected.',
    auth: 'key-or-sre',
    request: { query: sreEventQuery },
    responses: { 200: { description: 'the event stream', contentType: 'text/event-stream', schema: sreEvent } },
    handler: async ({ query }, ctx) => {
      await streamSreEvents(ctx, query.types);
    },
  });
}
