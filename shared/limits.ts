/**
 * Limits per person (or key, or client address), held in Redis so they hold across API processes:
 * a rate (so many per window) or a number in progress at once. Over a limit is a TooManyRequestsError
 * (429 with Retry-After). Each limit is a setting (LIMIT_*), 0 turning it off.
 */
import client from 'prom-client';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { config } from './config.js';
import { TooManyRequestsError } from './errors.js';
import { commandRedis } from './redis.js';
import { metricPrefix, metricsRegistry } from './metrics.js';

type Limits = ReturnType<typeof config>['limits'];

/** Every limit: its setting, its window in seconds, and what the 429 says. */
const definitions = {
  uploads: { points: (l: Limits) => l.uploadsPerHour, seconds: 3600, what: 'document uploads per hour (LIMIT_UPLOADS_PER_HOUR)' },
  uploadBytes: { points: (l: Limits) => l.uploadBytesPerHour, seconds: 3600, what: 'bytes of uploads per hour (LIMIT_UPLOAD_BYTES_PER_HOUR)' },
  // A slot in progress expires after an hour at most, should its process die before giving it back.
  uploadsInProgress: { points: (l: Limits) => l.uploadsConcurrent, seconds: 3600, what: 'uploads in progress at once (LIMIT_UPLOADS_CONCURRENT)' },
  // As uploads in progress: a stream's slot is given back when it ends, and lapses after an hour at most.
  streams: { points: (l: Limits) => l.streamsPerPerson, seconds: 3600, what: 'open streams per person (LIMIT_STREAMS_PER_PERSON)' },
  signInStarts: { points: (l: Limits) => l.signInStartsPerMinute, seconds: 60, what: 'sign-in starts per minute from one address (LIMIT_SIGNIN_STARTS_PER_MINUTE)' },
  sessionPublishes: { points: (l: Limits) => l.publishesPerSessionPerMinute, seconds: 60, what: 'publishes into one session per minute (LIMIT_PUBLISHES_PER_SESSION_PER_MINUTE)' },
  keyPublishes: { points: (l: Limits) => l.publishesPerKeyPerMinute, seconds: 60, what: 'publishes per minute by one caller (LIMIT_PUBLISHES_PER_KEY_PER_MINUTE)' },
  phoneCodes: { points: (l: Limits) => l.phoneCodesPerHour, seconds: 3600, what: 'phone verification codes per hour (LIMIT_PHONE_CODES_PER_HOUR)' },
  phoneCodesPerNumber: { points: (l: Limits) => l.phoneCodesPerNumberPerHour, seconds: 3600, what: 'phone verification codes to this number per hour (LIMIT_PHONE_CODES_PER_NUMBER_PER_HOUR)' },
  phoneCodesTotal: { points: (l: Limits) => l.phoneCodesTotalPerHour, seconds: 3600, what: 'phone verification codes per hour over everyone (LIMIT_PHONE_CODES_TOTAL_PER_HOUR)' },
  agentTurns: { points: (l: Limits) => l.agentTurnsPerMinute, seconds: 60, what: 'assistant turns per minute (LIMIT_AGENT_TURNS_PER_MINUTE)' },
  phoneCodeAttempts: { points: (l: Limits) => l.phoneCodeAttempts, seconds: () => config().phoneCodeTtlMinutes * 60, what: 'phone verification code attempts (LIMIT_PHONE_CODE_ATTEMPTS per PHONE_CODE_TTL_MINUTES)' },
  emailConnections: { points: (l: Limits) => l.emailConnectionsPerMinute, seconds: 60, what: 'SMTP connections per minute from one address (LIMIT_EMAIL_CONNECTIONS_PER_MINUTE)' },
  emailMessagesPerSender: { points: (l: Limits) => l.emailMessagesPerSenderPerHour, seconds: 3600, what: 'email messages per hour from one sender (LIMIT_EMAIL_MESSAGES_PER_SENDER_PER_HOUR)' },
  voicePinAttempts: { points: (l: Limits) => l.voicePinAttempts, seconds: 3600, what: 'voice PIN attempts per hour (LIMIT_VOICE_PIN_ATTEMPTS)' },
} as const;
export type LimitName = keyof typeof definitions;

const limiters = new Map<LimitName, RateLimiterRedis>();

const windowSeconds = (name: LimitName) => {
  const seconds = definitions[name].seconds;
  return typeof seconds === 'function' ? seconds() : seconds;
};
/** The Redis key prefix of a limit's counters (rate-limiter-flexible appends `:<key>`). */
const keyPrefix = (name: LimitName) => `${config().queues.prefix}:limit:${name}`;
/** Refusals by limit (a fixed set of names, never a key): a rise shows a person, address or flood at a cap. */
const refused = new client.Counter({
  name: `${metricPrefix}limit_refusals_total`,
  help: 'Requests refused (429) or turns not run because a per-person, per-address or overall limit was reached, by limit',
  labelNames: ['limit'] as const,
  registers: [metricsRegistry],
});

function limiter(name: LimitName): RateLimiterRedis | undefined {
  const def = definitions[name];
  const points = def.points(config().limits);
  if (points <= 0) return undefined;
  let found = limiters.get(name);
  if (!found) {
    found = new RateLimiterRedis({ storeClient: commandRedis('limits'), keyPrefix: keyPrefix(name), points, duration: windowSeconds(name) });
    limiters.set(name, found);
  }
  return found;
}

/** Takes `points` of a limit for `key` (a person, key or address); over it, a 429 with the seconds until room. */
export async function takeLimit(name: LimitName, key: string, points = 1): Promise<void> {
  const l = limiter(name);
  if (!l) return;
  try {
    await l.consume(key, points);
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    refused.inc({ limit: name });
    const retry = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
    throw new TooManyRequestsError(`Too many ${definitions[name].what}: at most ${l.points}; try again in ${retry} s.`, retry);
  }
}

/** One limit to take for a request of a group (takeLimitsTogether). */
export interface LimitTake {
  name: LimitName;
  key: string;
  points?: number;
}

/**
 * Takes the points of many limits in one script (one round trip), in order, with the same counters
 * and keys as takeLimit: KEYS are the counters, ARGV per key its points and window in seconds.
 * Answers per key the points consumed and the milliseconds left of the window.
 */
const takeManyScript = `local out = {}
for i, key in ipairs(KEYS) do
  local points, seconds = tonumber(ARGV[2 * i - 1]), ARGV[2 * i]
  redis.call('set', key, 0, 'EX', seconds, 'NX')
  local consumed = redis.call('incrby', key, points)
  local ttl = redis.call('pttl', key)
  if ttl == -1 then redis.call('expire', key, seconds); ttl = 1000 * seconds end
  out[#out + 1] = consumed
  out[#out + 1] = ttl
end
return out`;

type LimitsRedis = ReturnType<typeof commandRedis> & { takeLimits(...keysAndArgs: Array<string | number>): Promise<number[]> };
let scripted: LimitsRedis | undefined;
function limitsRedis(): LimitsRedis {
  const conn = commandRedis('limits');
  if (scripted !== conn) {
    conn.defineCommand('takeLimits', { lua: takeManyScript });
    scripted = conn as LimitsRedis;
  }
  return scripted;
}

/**
 * takeLimit for the requests of a group at once, in one round trip: per request (a list of limits),
 * undefined when every limit had room, else the 429 of the first one over. Exact across processes:
 * Redis counts each take in order, as one takeLimit each would.
 */
export async function takeLimitsTogether(requests: ReadonlyArray<readonly LimitTake[]>): Promise<Array<TooManyRequestsError | undefined>> {
  const keys: string[] = [];
  const args: number[] = [];
  const taken: Array<{ request: number; name: LimitName; allowed: number }> = [];
  requests.forEach((takes, request) => {
    for (const { name, key, points = 1 } of takes) {
      const allowed = definitions[name].points(config().limits);
      if (allowed <= 0) continue;
      keys.push(`${keyPrefix(name)}:${key}`);
      args.push(points, windowSeconds(name));
      taken.push({ request, name, allowed });
    }
  });
  const refusals: Array<TooManyRequestsError | undefined> = requests.map(() => undefined);
  if (!keys.length) return refusals;
  const out = await limitsRedis().takeLimits(keys.length, ...keys, ...args);
  taken.forEach(({ request, name, allowed }, i) => {
    if (refusals[request] || out[2 * i]! <= allowed) return;
    const retry = Math.max(1, Math.ceil(out[2 * i + 1]! / 1000));
    refused.inc({ limit: name });
    refusals[request] = new TooManyRequestsError(`Too many ${definitions[name].what}: at most ${allowed}; try again in ${retry} s.`, retry);
  });
  return refusals;
}

/** Holds one of a limited number of slots for `key` (e.g. uploads in progress); call the result to give it back. */
export async function holdSlot(name: LimitName, key: string): Promise<() => Promise<void>> {
  const l = limiter(name);
  try {
    await takeLimit(name, key);
  } catch (err) {
    // A refused attempt still counted in Redis: it holds no slot, so it is given back.
    if (err instanceof TooManyRequestsError) await l?.reward(key, 1).catch(() => undefined);
    throw err;
  }
  let given = false;
  return async () => {
    if (given || !l) return;
    given = true;
    await l.reward(key, 1).catch(() => undefined);
  };
}
