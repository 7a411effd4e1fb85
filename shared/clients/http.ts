/** What every REST client of an external system shares: a bounded request and one error for its failures. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { lookup, type LookupAddress } from 'node:dns';
import { UpstreamError } from '../errors.js';
import { logger } from '../logger.js';
import { loadOnFirstUse } from '../load-on-first-use.js';

const undici = loadOnFirstUse<typeof import('undici')>('undici');

/** An external system failed: unreachable (no status) or answered an error status. A 502 if it reaches a client. */
export class ExternalHttpError extends UpstreamError {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }

  /** 4xx other than 408/429 will not get better by retrying. */
  get permanent(): boolean {
    return this.status !== undefined && this.status >= 400 && this.status < 500 && this.status !== 408 && this.status !== 429;
  }
}

/** Why an address may not be connected to (undefined: it may), for the calls made within withAddressGuard. */
export type AddressCheck = (ip: string) => string | undefined;
const addressGuard = new AsyncLocalStorage<AddressCheck>();

/**
 * Runs `work` so that every requestText within it connects only to addresses `check` accepts, checked
 * on the addresses the connection actually uses (its own DNS lookup), so a name that resolves to
 * another address after an earlier check cannot slip through.
 */
export function withAddressGuard<T>(check: AddressCheck, work: () => Promise<T>): Promise<T> {
  return addressGuard.run(check, work);
}

function guardedDispatcher(check: AddressCheck) {
  return new (undici().Agent)({
    connect: {
      lookup: (hostname: string, options: object, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => {
        lookup(hostname, { ...options, all: true }, (err, addresses) => {
          if (err) return callback(err, []);
          const refused = addresses.map((a) => check(a.address)).find(Boolean);
          if (refused) return callback(new Error(`${hostname}: ${refused}`), []);
          if ((options as { all?: boolean }).all) return callback(null, addresses);
          callback(null, addresses[0]!.address, addresses[0]!.family);
        });
      },
    },
  });
}

/** Redirects followed within one origin; one to another origin (or scheme, host, port) is refused. */
const maxRedirects = 5;

/**
 * fetch with a timeout. Unreachable, or an answer outside 2xx, is an ExternalHttpError naming the
 * system, method, path and status; otherwise the status, headers and body text. The error body is
 * logged, never put in the message: messages reach API clients and stored records, and an upstream's
 * body is not ours to show them. Redirects are followed only within the configured origin: the
 * credentials a client sends must not follow a redirect to another host (nor may the server be led to
 * an internal one).
 */
export async function requestText(system: string, url: string, init: RequestInit & { timeoutMs: number }): Promise<{ status: number; headers: Headers; text: string }> {
  const check = addressGuard.getStore();
  const dispatcher = check ? guardedDispatcher(check) : undefined;
  try {
    return await followWithinOrigin(system, url, init, dispatcher);
  } finally {
    void dispatcher?.close();
  }
}

async function followWithinOrigin(system: string, url: string, init: RequestInit & { timeoutMs: number }, dispatcher: object | undefined) {
  const { timeoutMs, ...rest } = init;
  const signal = AbortSignal.timeout(timeoutMs);
  let res: Response;
  let at = url;
  for (let hop = 0; ; hop++) {
    try {
      res = await fetch(at, { ...rest, redirect: 'manual', signal, ...(dispatcher ? { dispatcher } : {}) } as RequestInit);
    } catch (err) {
      const cause = (err as { cause?: Error }).cause?.message;
      throw new ExternalHttpError(`${system} unreachable: ${(err as Error).message}${cause ? ` (${cause})` : ''}`);
    }
    const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
    if (!location) break;
    await res.body?.cancel();
    const next = new URL(location, at);
    if (next.origin !== new URL(url).origin) throw new ExternalHttpError(`${system} ${rest.method ?? 'GET'} ${new URL(at).pathname} redirected to another host (${next.origin}); refused`, res.status);
    if (hop >= maxRedirects) throw new ExternalHttpError(`${system} redirected more than ${maxRedirects} times`, res.status);
    // 303 (and, as browsers do, 301/302 after a POST) continues as a GET without the body.
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && rest.method && rest.method !== 'GET' && rest.method !== 'HEAD')) {
      rest.method = 'GET';
      delete rest.body;
    }
    at = next.href;
  }
  const text = await res.text();
  if (!res.ok) {
    const where = `${system} ${rest.method ?? 'GET'} ${new URL(url).pathname}`;
    logger('http-client').warn({ system, url: new URL(url).origin + new URL(url).pathname, status: res.status, body: text.slice(0, 2000) }, `${where} answered ${res.status}`);
    throw new ExternalHttpError(`${where} answered ${res.status}`, res.status);
  }
  return { status: res.status, headers: res.headers, text };
}

/** Parses an answer that should be JSON; otherwise an ExternalHttpError (the body is logged, not quoted: a parse error's message would quote it). */
export function parseJsonAnswer<T>(system: string, path: string, text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    logger('http-client').warn({ system, path, body: text.slice(0, 2000) }, `${system} ${path} answered a body that is not JSON`);
    throw new ExternalHttpError(`${system} ${path} answered a body that is not JSON`);
  }
}
