/**
 * CRM events on the platform bus, for the console's live views: a lead was created (webhook, API or
 * tool) or changed (fields, status, conversion, resubmission), an opportunity or an account changed.
 * Published after the change committed, small (ids and the new state): a view refetches what it
 * shows. One channel per deployment (QUEUE_PREFIX), as the SRE events.
 */
import { randomUUID } from 'node:crypto';
import { config } from '../config.js';
import { publishMessage, subscribeChannel } from '../bus.js';
import { logger } from '../logger.js';

export const crmEventTypes = ['lead.created', 'lead.changed', 'opportunity.changed', 'account.changed'] as const;
export type CrmEventType = (typeof crmEventTypes)[number];

export interface CrmEvent {
  id: string;
  type: CrmEventType;
  /** ISO time of publication. */
  at: string;
  data: Record<string, unknown>;
}

const crmChannel = () => `${config().queues.prefix}:crm:events`;

/** Publishes without making the caller wait or fail: the change committed, a lost live event only delays a view. */
export function publishCrmEvent(type: CrmEventType, data: Record<string, unknown>): void {
  const event: CrmEvent = { id: randomUUID(), type, at: new Date().toISOString(), data };
  publishMessage(crmChannel(), event).catch((err: Error) => logger('crm-events').warn({ type, err: err.message }, 'CRM event not published'));
}

/** Adds a local listener of CRM events (one subscriber connection per process, see bus.ts). */
export function subscribeCrmEvents(listener: (event: CrmEvent) => void): Promise<() => void> {
  return subscribeChannel<CrmEvent>(crmChannel(), listener);
}
