/** What every REST client of an external system shares: a bounded request and one error for its failures. */
import { UpstreamError } from '../errors.js';
import { logger } from '../logger.js';

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

/**
 * fetch with a timeout. Unreachable, or an answer outside 2xx, is an ExternalHttpError naming the
 * system, method, path and status; otherwise the status, headers and body text. The error body is
 * logged, never put in the message: messages reach API clients and stored records, and an upstream's
 * body is not ours to show them.
 */
export async function requestText(system: string, url: string, init: RequestInit & { timeoutMs: number }): Promise<{ status: number; headers: Headers; text: string }> {
  const { timeoutMs, ...rest } = init;
  let res: Response;
  try {
    res = await fetch(url, { ...rest, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new ExternalHttpError(`${system} unreachable: ${(err as Error).message}`);
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
