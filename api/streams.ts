/** Long-lived responses (SSE) of this process, so shutdown can end them before the server closes, and their limits. */
import { config } from '../shared/config.js';
import { TooManyRequestsError } from '../shared/errors.js';

const open = new Set<() => void>();
const admitted = { total: 0, perKey: new Map<string, number>() };
/** Streams end when their clients leave; a few seconds is a fair guess at when one is free again. */
const retryAfterSeconds = 5;

/**
 * Admits one more stream of `keyId` (an API key's id; undefined for other callers), or throws 429 with
 * Retry-After when the process (SSE_MAX_STREAMS) or the key (SSE_MAX_STREAMS_PER_KEY) is at its cap.
 * Returns the release function, safe to call more than once.
 */
export function admitStream(keyId: string | undefined): () => void {
  const { max, maxPerKey } = config().streams;
  if (admitted.total >= max) throw new TooManyRequestsError(`This server holds its maximum of ${max} streams (SSE_MAX_STREAMS); retry later.`, retryAfterSeconds);
  const key = keyId ?? '';
  const ofKey = admitted.perKey.get(key) ?? 0;
  if (ofKey >= maxPerKey) throw new TooManyRequestsError(`This API key holds its maximum of ${maxPerKey} open streams (SSE_MAX_STREAMS_PER_KEY); close one or retry later.`, retryAfterSeconds);
  admitted.total += 1;
  admitted.perKey.set(key, ofKey + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    admitted.total -= 1;
    const left = (admitted.perKey.get(key) ?? 1) - 1;
    if (left > 0) admitted.perKey.set(key, left);
    else admitted.perKey.delete(key);
  };
}

/** Tracks a stream; returns the function that forgets it (call it when the stream ends on its own). */
export function trackStream(end: () => void): () => void {
  open.add(end);
  return () => open.delete(end);
}

/** Ends every open stream (clients reconnect elsewhere and replay what they missed). */
export function endAllStreams(): void {
  for (const end of [...open]) end();
  open.clear();
}

export function openStreamCount(): number {
  return open.size;
}
