/**
 * The message bus of session events and SRE events (Redis publish/subscribe). A process holds one publisher and at
 * most one subscriber connection, whatever the number of local listeners: channels are subscribed
 * while at least one local listener wants them, and every message is parsed once and handed to each.
 * The bus keeps nothing; Postgres is the record (a reconnecting SSE client replays from there).
 */
import type { Redis } from 'ioredis';
import { closeOrDrop, createRedis } from './redis.js';
import { closeAtShutdown } from './lifecycle.js';
import { logger } from './logger.js';
import { ServiceUnavailableError } from './errors.js';
import { reportRedisError } from './outages.js';

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
/**
 * A listener that is an object with a method rather than a closure: an SSE stream is one already,
 * and 10,000 idle streams then hold no closure (and its context) each for the bus.
 */
export interface BusSubscriber<T = BusEvent> {
  onMessage(message: T): void;
}
type AnyListener = ((message: any) => void) | BusSubscriber<any>;
/** A reconnect hook: a function, or an object whose onBusReconnect runs (see BusSubscriber). */
type ReconnectHook = (() => void) | { onBusReconnect(): void };

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
/** Channels Redis has confirmed on the current subscriber connection (forgotten when it drops). */
const confirmed = new Set<string>();
/** How long a first subscription waits for a connection still being made. */
const firstConnectWaitMs = 1_500;

function publisherConnection(): Redis {
  if (!publisher) {
    // Auto-pipelining: events the lanes of a worker publish in the same tick leave in one write.
    const conn = createRedis(`bus-pub:${process.pid}`, { enableAutoPipelining: true });
    publisher = conn;
    closeAtShutdown('bus publisher', () => {
      if (publisher === conn) publisher = undefined;
      return closeOrDrop(() => conn.quit(), () => conn.disconnect());
    });
  }
  return publisher;
}

/** Hooks run after the subscriber connection came back and every channel is subscribed again. */
const reconnectHooks = new Set<ReconnectHook>();

/**
 * Runs `hook` each time the subscriber connection is back after a loss, once Redis has confirmed
 * every channel again: whatever was published meanwhile never reached this process, so a stream
 * fills its gap from Postgres. Returns the function that removes the hook.
 */
export function onBusReconnect(hook: ReconnectHook): () => void {
  reconnectHooks.add(hook);
  return () => reconnectHooks.delete(hook);
}

/** Removes a hook added with onBusReconnect. */
export function offBusReconnect(hook: ReconnectHook): void {
  reconnectHooks.delete(hook);
}

function subscriberConnection(): Redis {
  if (!subscriber) {
    // No offline queue: a SUBSCRIBE while Redis is away fails at once (the stream answers 503)
    // instead of waiting for the connection; channels are subscribed again by the 'ready' handler.
    const conn = createRedis(`bus-sub:${process.pid}`, { autoResubscribe: false, enableOfflineQueue: false });
    subscriber = conn;
    let lost = false;
    conn.on('close', () => {
      lost = true;
      confirmed.clear();
    });
    conn.on('ready', () => {
      if (!lost) return;
      lost = false;
      const channels = [...listeners.keys()];
      const resubscribed = channels.length ? conn.subscribe(...channels) : Promise.resolve();
      resubscribed.then(
        () => {
          for (const c of channels) confirmed.add(c);
          logger('bus').info({ channels: channels.length }, 'bus subscriber back; streams fill their gap from Postgres');
          for (const hook of [...reconnectHooks]) {
            if (typeof hook === 'function') hook();
            else hook.onBusReconnect();
          }
        },
        // The connection dropped again; the next 'ready' retries.
        () => undefined,
      );
    });
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
      for (const listener of [...set]) {
        if (typeof listener === 'function') listener(event);
        else listener.onMessage(event);
      }
    });
    conn.on('error', (err) => reportRedisError('bus subscriber', err));
    closeAtShutdown('bus subscriber', () => {
      if (subscriber === conn) subscriber = undefined;
      listeners.clear();
      subscribing.clear();
      confirmed.clear();
      for (const t of lingering.values()) clearTimeout(t);
      lingering.clear();
      return closeOrDrop(() => conn.quit(), () => conn.disconnect());
    });
  }
  return subscriber;
}

/** Publishes an event on its session's channel; resolves with the number of processes that received it. */
export function publishEvent(event: BusEvent): Promise<number> {
  return publishMessage(sessionChannel(event.session_id), event);
}

/** Waits (bounded) for a connection still making its first connection; a lost one fails at once. */
async function whenReady(conn: Redis, ms: number): Promise<void> {
  if (conn.status === 'ready') return;
  // wait/connecting/connect: the connection is still being made (connect: TCP up, handshake under way).
  if (!['wait', 'connecting', 'connect'].includes(conn.status)) throw new ServiceUnavailableError('The message bus is unavailable; retry shortly.');
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => done(new ServiceUnavailableError('The message bus is unavailable; retry shortly.')), ms);
    const onReady = () => done();
    function done(err?: Error) {
      clearTimeout(timer);
      conn.off('ready', onReady);
      if (err) reject(err);
      else resolve();
    }
    conn.once('ready', onReady);
  });
}

/**
 * Adds a local listener of a session's events. Resolves once Redis has confirmed the subscription,
 * so anything published afterwards reaches the listener. Returns the function that removes it.
 * While Redis is away it fails at once with ServiceUnavailableError (503) instead of waiting.
 */
export function subscribeSession(sessionId: string, listener: BusListener | BusSubscriber): Promise<() => void> {
  return subscribeChannel(sessionChannel(sessionId), listener);
}

/** Removes a listener added with subscribeSession (as the function it returned does). */
export function leaveSession(sessionId: string, listener: BusListener | BusSubscriber): void {
  leaveChannel(sessionChannel(sessionId), listener);
}

/** Publishes a JSON message on a channel; resolves with the number of processes that received it. */
export function publishMessage(channel: string, message: unknown): Promise<number> {
  return publisherConnection().publish(channel, JSON.stringify(message));
}

/**
 * Adds a local listener of a channel's (JSON) messages over the process's one subscriber connection;
 * resolves once Redis has confirmed the subscription. Returns the function that removes it.
 */
export async function subscribeChannel<T>(channel: string, listener: ((message: T) => void) | BusSubscriber<T>): Promise<() => void> {
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
  try {
    await whenReady(conn, firstConnectWaitMs);
    if (!confirmed.has(channel)) {
      let pending = subscribing.get(channel);
      if (!pending) {
        pending = conn.subscribe(channel).then(
          () => void confirmed.add(channel),
          () => {
            throw new ServiceUnavailableError('The message bus is unavailable; retry shortly.');
          },
        ).finally(() => subscribing.delete(channel));
        subscribing.set(channel, pending);
      }
      await pending;
    }
  } catch (err) {
    set.delete(listener);
    if (!set.size && !lingering.has(channel)) listeners.delete(channel);
    throw err;
  }
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    leaveChannel(channel, listener);
  };
}

/** Removes a local listener of a channel; the channel is unsubscribed after a short linger once it has none. */
export function leaveChannel(channel: string, listener: AnyListener): void {
  const set = listeners.get(channel);
  if (!set?.delete(listener)) return;
  if (set.size === 0 && !lingering.has(channel)) {
    const timer = setTimeout(() => {
      lingering.delete(channel);
      if (listeners.get(channel)?.size === 0) {
        listeners.delete(channel);
        confirmed.delete(channel);
        subscriber?.unsubscribe(channel).catch(() => undefined);
      }
    }, lingerMs);
    timer.unref();
    lingering.set(channel, timer);
  }
}

/** Channels this process is subscribed to (diagnostics and tests). */
export function subscribedChannelCount(): number {
  return listeners.size;
}
