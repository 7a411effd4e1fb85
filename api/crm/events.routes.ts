/** GET /api/v1/crm/events: the live CRM events as server-sent events, for the console's CRM screens. */
import client from 'prom-client';
import { ApiRouter } from '../routing.js';
import { metricsRegistry, metricPrefix } from '../../shared/metrics.js';
import { crmEventTypes, subscribeCrmEvents, type CrmEvent } from '../../shared/crm/events.js';
import { streamBusEvents } from '../event-stream.js';
import { crmEvent, crmEventQuery } from './events.schemas.js';

const openStreams = new client.Gauge({ name: `${metricPrefix}crm_sse_streams`, help: 'Open CRM event SSE streams in this process', registers: [metricsRegistry] });

export function crmEventRoutes(): ApiRouter {
  return new ApiRouter().route({
    method: 'get',
    path: '/api/v1/crm/events',
    tags: ['crm'],
    summary: 'Live CRM events (server-sent events)',
    description: [
      'One `data:` line per event with the JSON {id, type, at, data}; `id:` is the event id. Types:',
      `${crmEventTypes.join(', ')}.`,
      '`lead.created` {ids, by} (API, tool or webhook, batches included); `lead.changed` {id or ids, change: fields | status | converted | resubmission | deleted, status?, by?};',
      '`opportunity.changed` {id, change: created | updated | deleted, stage?, by?}; `account.changed` {id, change: created | updated | deleted}.',
      'Events are published after the change is committed, so a refetch on receipt sees it. No replay: a client that reconnects refetches what it shows.',
      'A client that does not keep up is disconnected.',
    ].join(' '),
    auth: 'key-or-sales-or-sre',
    request: { query: crmEventQuery },
    responses: { 200: { description: 'the event stream', contentType: 'text/event-stream', schema: crmEvent } },
    handler: async ({ query }, ctx) => {
      await streamBusEvents<CrmEvent>(ctx, subscribeCrmEvents, query.types, openStreams);
    },
  });
}
