/**
 * The message bus of session events and SRE events (Redis publish/subscribe). A process holds one publisher and at
 * most one subscriber connection, whatever the number of local listeners: channels are subscribed
 * while at least one local listener wants them, and every message is parsed once and handed to each.
 * The bus keeps nothing; Postgres is the record (a reconnecting SSE client replays from there).
 */
import type { Redis } from 'ioredis';
import { createRedis } from './redis.js';
import { onShutdown } from './lifecycle.js';
import { logger } from './logger.js';

/** The envelope of a session event as the spec names it, with its position in the session's stream. */
export interface BusEvent {
  /** The event's id: the message_id of a MESSAGE, else the event's own id (not part of the SSE envelope). */
  id: string;
  /** Position in the session's event stream (the SSE id). */
  sequence: number;
  event_type: string;
  session_id: string;
  channel: string;
  data: Record<string, unknown>;
}

export type BusListener = (event: BusEvent) => void;
type AnyListener = (message: any) => void;

/** The bus channel of a session: `session:{session_id}:events`. */
export const sessionChannel = (sessionId: string) => `session:${sessionId}:events`;

let publisher: Redis | undefined;
let subscriber: Redis | undefined;
const listeners = new Map<string, Set<AnyListener>>();
/** Pending SUBSCRIBE of a channel, so concurrent first listeners wait for the same acknowledgement. */
const subscribing = new Map<string, Promise<unknown>>();
/** Channels whose last listener left recently; unsubscribed after a short linger to avoid churn. */
const lingering = new Map<string, NodeJS.Timeout>();
const lingerMs = 5_000;

function publisherConnection(): Redis {
  if (!publisher) {
    // Auto-pipelining: the events a worker's lanes publish after one group commit leave in one write.
    const conn = createRedis(`bus-pub:${process.pid}`, { enableAutoPipelining: true });
    publisher = conn;
    onShutdown('bus publisher', () => {
      if (publisher === conn) publisher = undefined;
      return conn.quit().catch(() => conn.disconnect());
    });
  }
  return publisher;
}

function subscriberConnection(): Redis {
  if (!subscriber) {
    const conn = createRedis(`bus-sub:${process.pid}`);
    subscriber = conn;
    conn.on('message', (channel: string, raw: string) => {
      const set = listeners.get(channel);
      if (!set?.size) return;
      let event: unknown;
      try {
        event = JSON.parse(raw);
      } catch (err) {
        logger('bus').warn({ channel, err }, 'unparseable bus message dropped');
        return;
      }
      for (const listener of [...set]) listener(event);
    });
    conn.on('error', (err) => logger('bus').warn({ err: err.message }, 'bus subscriber connection error'));
    onShutdown('bus subscriber', () => {
      if (subscriber === conn) subscriber = undefined;
      listeners.clear();
      subscribing.clear();
      for (const t of lingering.values()) clearTimeout(t);
      lingering.clear();
      return conn.quit().catch(() => conn.disconnect());
    });
  }
  return subscriber;
}

/** Publishes an event on its session's channel; resolves with the number of processes that received it. */
export function publishEvent(event: BusEvent): Promise<number> {
  return publishMessage(sessionChannel(event.session_id), event);
}

/**
 * Adds a local listener of a session's events. Resolves once Redis has confirmed the subscription,
 * so anything published afterwards reaches the listener. Returns the function that removes it.
 */
export function subscribeSession(sessionId: string, listener: BusListener): Promise<() => void> {
  return subscribeChannel(sessionChannel(sessionId), listener);
}

/** Publishes a JSON message on a channel; resolves with the number of processes that received it. */
export function publishMessage(channel: string, message: unknown): Promise<number> {
  return publisherConnection().publish(channel, JSON.stringify(message));
}

/**
 * Adds a local listener of a channel's (JSON) messages over the process's one subscriber connection;
 * resolves once Redis has confirmed the subscription. Returns the function that removes it.
 */
export async function subscribeChannel<T>(channel: string, listener: (message: T) => void): Promise<() => void> {
  let set = listeners.get(channel);
  if (!set) {
    set = new Set();
    listeners.set(channel, set);
  }
  set.add(listener);
  const linger = lingering.get(channel);
  if (linger) {
    clearTimeout(linger);
    lingering.delete(channel);
  }
  const conn = subscriberConnection();
  let pending = subscribing.get(channel);
  if (!pending && set.size === 1 && !linger) {
    pending = conn.subscribe(channel).finally(() => subscribing.delete(channel));
    subscribing.set(channel, pending);
  }
  if (pending) await pending;
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    set.delete(listener);
    if (set.size === 0 && !lingering.has(channel)) {
      const timer = setTimeout(() => {
        lingering.delete(channel);
        if (listeners.get(channel)?.size === 0) {
          listeners.delete(channel);
          subscriber?.unsubscribe(channel).catch(() => undefined);
        }
      }, lingerMs);
      timer.unref();
      lingering.set(channel, timer);
    }
  };
}

/** Channels this process is subscribed to (diagnostics and tests). */
export function subscribedChannelCount(): number {
  return listeners.size;
}
