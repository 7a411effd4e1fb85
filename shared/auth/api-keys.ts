/**
 * Which key a request presented and what it may do. The keys of API_KEYS are full-access (scope `*`)
 * and compared as digests in constant time; any other key is looked up by its SHA-256 among the named
 * keys of `api_keys`, and what was read is trusted for API_KEY_CACHE_MS (so a revoked key stops
 * working that soon, and a stream of bad keys does not reach the database on every request).
 */
import { LRUCache } from 'lru-cache';
import { config } from '../config.js';
import { matchDigest, secretDigest } from '../secrets.js';
import { findLiveKey, findLiveKeyByName, keyDigestHex } from './api-keys.store.js';
import type { Scope } from './scopes.js';

export interface KeyIdentity {
  /** Non-secret id for audit rows and per-key limits: `key:<name>`, or `key:` + 16 hex digits of the SHA-256 for an API_KEYS key. */
  id: string;
  scopes: readonly Scope[];
}

const fullAccess: readonly Scope[] = ['*'];
const idOfDigest = (digest: Buffer) => `key:${digest.toString('hex').slice(0, 16)}`;
const namedKeyId = (name: string) => `key:${name}`;

let configured: { keys: readonly string[]; digests: Buffer[]; ids: string[] } | undefined;

function configuredKeys() {
  const keys = config().auth.apiKeys;
  if (configured?.keys !== keys) {
    const digests = keys.map(secretDigest);
    configured = { keys, digests, ids: digests.map(idOfDigest) };
  }
  return configured;
}

// Unknown keys are cached too (as null), bounded, since callers choose what is looked up.
const named = new LRUCache<string, KeyIdentity | 'none'>({ max: 10_000 });

/** The identity of a presented key, or undefined when it is neither in API_KEYS nor a live named key. */
export async function identifyKey(key: string): Promise<KeyIdentity | undefined> {
  const { digests, ids } = configuredKeys();
  const index = matchDigest(key, digests);
  if (index >= 0) return { id: ids[index]!, scopes: fullAccess };
  const digest = keyDigestHex(key);
  const cached = named.get(digest);
  if (cached) return cached === 'none' ? undefined : cached;
  const row = await findLiveKey(digest);
  const found: KeyIdentity | 'none' = row ? { id: namedKeyId(row.name), scopes: row.scopes } : 'none';
  const ttl = config().authority.keyCacheMs;
  if (ttl > 0) named.set(digest, found, { ttl });
  return found === 'none' ? undefined : found;
}

/** What a key of a given id may do now (a delegated run re-checks the key that asked for it); undefined once revoked. */
export async function currentKeyScopes(keyId: string): Promise<readonly Scope[] | undefined> {
  if (configuredKeys().ids.includes(keyId)) return fullAccess;
  if (!keyId.startsWith('key:')) return undefined;
  return (await findLiveKeyByName(keyId.slice(4)))?.scopes;
}

/** Forgets what this process read of named keys (after a revoke here, so it applies at once in this process). */
export function forgetNamedKeys(): void {
  named.clear();
}
