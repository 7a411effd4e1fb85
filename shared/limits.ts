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
} as const;
export type LimitName = keyof typeof definitions;

const limiters = new Map<LimitName, RateLimiterRedis>();

/** Refusals by limit (a fixed set of names, never a key): a rise shows a person, address or flood at a cap. */
const refusals = new client.Counter({
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
    const seconds = typeof def.seconds === 'function' ? def.seconds() : def.seconds;
    found = new RateLimiterRedis({ storeClient: commandRedis('limits'), keyPrefix: `${config().queues.prefix}:limit:${name}`, points, duration: seconds });
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
    refusals.inc({ limit: name });
    const retry = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
    throw new TooManyRequestsError(`Too many ${definitions[name].what}: at most ${l.points}; try again in ${retry} s.`, retry);
  }
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
