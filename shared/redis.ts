/** Redis connections: one factory, so every connection has the same host, password, limits and naming. */
import { Redis, type RedisOptions } from 'ioredis';
import type { ConnectionOptions } from 'bullmq';
import { config, type Config } from './config.js';
import { dependencyRecovered, reportRedisError } from './outages.js';
import { closeAtShutdown } from './lifecycle.js';

/**
 * Connection options shared by queues, workers and the bus. Reconnection retries every 100 ms,
 * growing to at most 1 s, so service returns within about a second of Redis (BullMQ's own default
 * grows to 20 s); a connection attempt gives up after 2 s.
 */
export function redisOptions(extra: RedisOptions = {}): RedisOptions {
  const { host, port, username, password, db, tls, sentinel } = config().redis;
  const server: RedisOptions = sentinel ? sentinelOptions(sentinel) : { host, port };
  return { ...server, username, password, db, tls, lazyConnect: false, connectTimeout: 2_000, retryStrategy: (times) => Math.min(times * 100, 1_000), ...extra };
}

/**
 * Redis Sentinel: each connection asks the sentinels for the master, and connects again (asking
 * again) when it is lost, or when the server it reached answers READONLY (a former master now a
 * replica); a command refused READONLY was not run, so it is sent again. No failoverDetector: its
 * +switch-master, arriving while a connection asks a sentinel, ends that connection for good
 * (ioredis 6.0; test/platform/redis-sentinel.test.ts then fails). The cost: a frozen master is
 * followed only once its connections drop, or once it is back and, demoted, closes them.
 */
function sentinelOptions(sentinel: NonNullable<Config['redis']['sentinel']>): RedisOptions {
  return {
    name: sentinel.masterName,
    sentinels: sentinel.sentinels,
    sentinelUsername: sentinel.username,
    sentinelPassword: sentinel.password,
    sentinelRetryStrategy: (times) => Math.min(times * 100, 1_000),
    reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
  };
}

/** Where Redis is, for messages: host:port, or the master name and its sentinels. */
export function redisAddress(): string {
  const { host, port, sentinel } = config().redis;
  return sentinel ? `master "${sentinel.masterName}" of sentinels ${sentinel.sentinels.map((s) => `${s.host}:${s.port}`).join(',')}` : `${host}:${port}`;
}

/**
 * Limits of connections whose commands someone waits for (an HTTP request, a job's step): while
 * Redis is away a command is dropped with an error at the next reconnection attempt (at most 1 s
 * later) instead of waiting until Redis is back (and running after the client gave up); one that
 * gets no answer (a frozen server) fails after the command timeout. The offline queue stays on so
 * commands issued before the first connection, and a QUIT during an outage, still work.
 */
function bounded(): RedisOptions {
  return { maxRetriesPerRequest: 0, commandTimeout: config().redis.commandTimeoutMs };
}

/** How long a graceful close of Redis connections (QUIT) may take before they are dropped instead. */
const quitGraceMs = 2_000;

/**
 * Closes Redis connections gracefully (`close`, a QUIT), or drops them (`drop`, without waiting for
 * it) when that has not ended within the grace: toward a Redis that is away, a QUIT waits for a
 * reconnection that may never come, and a shutdown must still end.
 */
export async function closeOrDrop(close: () => Promise<unknown>, drop: () => unknown, graceMs = quitGraceMs): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
  try {
    const closed = await Promise.race([close().then(() => true, () => false), late]);
    if (!closed) void Promise.resolve().then(drop).catch(() => undefined);
  } finally {
    clearTimeout(timer);
  }
}

/** Reports connection errors and recoveries as Redis outages (one log line each, not one per retry). */
function watch(conn: Redis, name: string): Redis {
  conn.on('error', (err) => reportRedisError(name, err));
  conn.on('ready', () => dependencyRecovered('redis'));
  return conn;
}

/** A new bounded Redis connection (see bounded()); `name` shows in CLIENT LIST. */
export function createRedis(name: string, extra: RedisOptions = {}): Redis {
  return watch(new Redis(redisOptions({ connectionName: `switchboard:${name}`, ...bounded(), ...extra })), name);
}

const commandConnections = new Map<string, Redis>();

/** The process's one command connection of a module (made on first use, closed at shutdown). */
export function commandRedis(name: string): Redis {
  let conn = commandConnections.get(name);
  if (!conn) {
    const created = createRedis(`${name}:${process.pid}`);
    commandConnections.set(name, (conn = created));
    closeAtShutdown(`${name} redis`, () => {
      if (commandConnections.get(name) === created) commandConnections.delete(name);
      return closeOrDrop(() => created.quit(), () => created.disconnect());
    });
  }
  return conn;
}

/** Answers whether a Redis replies to PING within the timeout, on a connection of its own (npm run dev: is there a Redis at all?). */
export async function pingRedis(timeoutMs = 1000): Promise<boolean> {
  const probe = new Redis(redisOptions({ connectionName: 'switchboard:probe', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: timeoutMs, enableOfflineQueue: false }));
  probe.on('error', () => {}); // the outcome is the answer; nothing to report
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/**
 * Readiness: whether Redis answers PING within the timeout, through the process's kept command
 * connection for probes (made at the first probe, bounded like every command connection, closed at
 * shutdown). A probe polled every few seconds must not open a connection of its own each time, and
 * a connection that is away fails the probe until it is back, as it fails the requests.
 */
export async function redisAnswers(timeoutMs = 1000): Promise<boolean> {
  const conn = commandRedis('probe');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  try {
    return await Promise.race([conn.ping().then((r) => r === 'PONG', () => false), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Connection options of BullMQ queues (producers): bounded like createRedis. */
export function bullConnection(extra: RedisOptions = {}): ConnectionOptions {
  return redisOptions({ ...bounded(), ...extra }) as ConnectionOptions;
}

/** Connection options of BullMQ workers and QueueEvents: blocking commands, so no command timeout, and retried across reconnects. */
export function blockingConnection(): ConnectionOptions {
  return redisOptions({ maxRetriesPerRequest: null }) as ConnectionOptions;
}

/** What start-up found about Redis' durability (checkRedisDurability). */
export interface RedisDurability {
  appendonly: boolean;
  save: string;
  maxmemoryPolicy: string;
  problems: string[];
}

/**
 * Reads Redis' persistence and eviction settings. Accepted work lives in Redis until a worker has
 * written it: without persistence (AOF or RDB snapshots) a Redis restart loses it, and with any
 * eviction policy but noeviction Redis may drop queued jobs (BullMQ requires noeviction).
 */
export async function readRedisDurability(conn: Redis): Promise<RedisDurability> {
  const get = async (key: string): Promise<string | undefined> => {
    try {
      const reply = (await conn.call('CONFIG', 'GET', key)) as string[];
      return reply[1];
    } catch {
      return undefined; // CONFIG disabled (managed Redis): fall back to INFO
    }
  };
  const info = await conn.info('persistence').catch(() => '');
  const memory = await conn.info('memory').catch(() => '');
  const appendonly = (await get('appendonly')) ?? (/aof_enabled:1/.test(info) ? 'yes' : 'no');
  const save = (await get('save')) ?? '';
  const maxmemoryPolicy = (await get('maxmemory-policy')) ?? /maxmemory_policy:(\S+)/.exec(memory)?.[1] ?? 'unknown';
  const problems: string[] = [];
  if (appendonly !== 'yes' && !save.trim()) problems.push('persistence is off (appendonly no, save ""): a Redis restart loses every accepted job not yet processed; set appendonly yes');
  if (maxmemoryPolicy !== 'noeviction') problems.push(`maxmemory-policy is ${maxmemoryPolicy}: Redis may evict queued jobs; BullMQ requires noeviction`);
  return { appendonly: appendonly === 'yes', save, maxmemoryPolicy, problems };
}

/**
 * Start-up check of Redis' durability: in production a problem stops start-up (unless
 * REDIS_ALLOW_VOLATILE=true says the loss is accepted); elsewhere it is a warning. Returns the
 * problems found; throws a one-line Error to refuse.
 */
export async function checkRedisDurability(
  warn: (message: string) => void,
  policy: { production: boolean; allowVolatile: boolean } = { production: config().isProduction, allowVolatile: config().redis.allowVolatile },
): Promise<string[]> {
  const conn = new Redis(redisOptions({ connectionName: 'switchboard:startup-check', maxRetriesPerRequest: 0, enableOfflineQueue: true, retryStrategy: () => null, lazyConnect: true }));
  conn.on('error', () => undefined);
  let durability: RedisDurability;
  try {
    await conn.connect();
    durability = await readRedisDurability(conn);
  } catch (err) {
    throw new Error(`Redis at ${redisAddress()} does not answer (${(err as Error).message}); start it or set REDIS_URL (or BUS_HOST/BUS_PORT, or REDIS_SENTINELS).`);
  } finally {
    conn.disconnect();
  }
  if (!durability.problems.length) return [];
  const text = `Redis at ${redisAddress()}: ${durability.problems.join('; ')}`;
  if (policy.production && !policy.allowVolatile) throw new Error(`${text}. Refusing to start in production; fix Redis or set REDIS_ALLOW_VOLATILE=true to accept the loss.`);
  warn(text);
  return durability.problems;
}
