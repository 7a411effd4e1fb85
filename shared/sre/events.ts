/**
 * SRE events on the platform bus: what changed (an alert fired or changed state, an incident opened
 * or changed, a discovery run started or finished, a runbook execution changed), for the console's
 * live views. Published by the code that changed the state, after its transaction committed; small
 * (ids and the new state): a view refetches what it shows. Not a record: Postgres is.
 * One channel per deployment (QUEUE_PREFIX), so test files sharing a Redis do not hear each other.
 */
import { randomUUID } from 'node:crypto';
import { config } from '../config.js';
import { publishMessage, subscribeChannel } from '../bus.js';
import { logger } from '../logger.js';

export const sreEventTypes = [
  'alert.fired',
  'alert.changed',
  'incident.opened',
  'incident.changed',
  'discovery.started',
  'discovery.finished',
  'runbook_execution.changed',
] as const;
export type SreEventType = (typeof sreEventTypes)[number];

export interface SreEvent {
  id: string;
  type: SreEventType;
  /** ISO time of publication. */
  at: string;
  data: Record<string, unknown>;
}

export const sreChannel = () => `${config().queues.prefix}:sre:events`;

/**
 * Publishes an event without making the caller wait or fail: the state change already committed,
 * and a lost live event only delays a view until its next refetch.
 */
export function publishSreEvent(type: SreEventType, data: Record<string, unknown>): void {
  const event: SreEvent = { id: randomUUID(), type, at: new Date().toISOString(), data };
  publishMessage(sreChannel(), event).catch((err: Error) => logger('sre-events').warn({ type, err: err.message }, 'SRE event not published'));
}

/** Adds a local listener of SRE events (one subscriber connection per process, see bus.ts). */
export function subscribeSreEvents(listener: (event: SreEvent) => void): Promise<() => void> {
  return subscribeChannel<SreEvent>(sreChannel(), listener);
}
