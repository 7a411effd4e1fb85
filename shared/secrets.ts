/** Comparing secrets without telling an attacker anything through timing (neither content nor length). */
import { createHash, timingSafeEqual } from 'node:crypto';

/** SHA-256 of a secret: a fixed 32 bytes whatever its length, so comparisons never depend on it. */
export function secretDigest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Constant-time equality of two secrets, comparing their digests (timingSafeEqual needs equal lengths). */
export function secretsEqual(presented: string, expected: string | Buffer): boolean {
  return timingSafeEqual(secretDigest(presented), Buffer.isBuffer(expected) ? expected : secretDigest(expected));
}

/**
 * The index of the digest in `digests` that `presented` matches, or -1. Every digest is compared
 * (no early exit), so the time taken does not reveal which key, or whether any, matched.
 */
export function matchDigest(presented: string, digests: readonly Buffer[]): number {
  const given = secretDigest(presented);
  let found = -1;
  for (let i = 0; i < digests.length; i++) if (timingSafeEqual(given, digests[i]!) && found < 0) found = i;
  return found;
}
