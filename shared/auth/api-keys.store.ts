/**
 * Query module of `api_keys`: named, scoped keys kept as the SHA-256 of the key (the key itself is
 * shown once, when created). The keys of API_KEYS are not here: they are full-access keys from the
 * environment (see api-keys.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { db } from '../db/index.js';
import { ConflictError, NotFoundError } from '../errors.js';
import type { Scope } from './scopes.js';

const TABLE = 'api_keys';
const COLUMNS = ['id', 'name', 'scopes', 'created_by', 'revoked_at', 'created_at'];

export interface ApiKeyRow {
  id: string;
  name: string;
  scopes: Scope[];
  created_by: string;
  revoked_at: Date | null;
  created_at: Date;
}

export const keyDigestHex = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');

/** Creates a key; returns the row and the key (never stored). A name already used (even by a revoked key) is a 409. */
export async function createApiKey(input: { name: string; scopes: Scope[]; created_by: string }): Promise<{ key: string; row: ApiKeyRow }> {
  const key = `sbk_${randomBytes(32).toString('base64url')}`;
  try {
    const [row] = await db()(TABLE).insert({ ...input, scopes: [...new Set(input.scopes)], key_sha256: keyDigestHex(key) }).returning(COLUMNS);
    return { key, row: row as ApiKeyRow };
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw new ConflictError(`A key named ${input.name} exists (names are never reused).`, [{ path: 'body.name', message: 'already used' }]);
    throw err;
  }
}

export async function listApiKeys(includeRevoked: boolean): Promise<ApiKeyRow[]> {
  const q = db()(TABLE).select(COLUMNS).orderBy('created_at', 'desc');
  if (!includeRevoked) q.whereNull('revoked_at');
  return q;
}

/** Revokes a key (idempotent); an unknown id is a 404. `check` sees the key first and may refuse by throwing. */
export async function revokeApiKey(id: string, check: (key: ApiKeyRow) => void = () => undefined): Promise<ApiKeyRow> {
  return db().transaction(async (trx) => {
    const found = await trx(TABLE).select(COLUMNS).where({ id }).forUpdate().first();
    if (!found) throw new NotFoundError(`No API key ${id}.`);
    check(found as ApiKeyRow);
    const [row] = await trx(TABLE).where({ id }).update({ revoked_at: db().raw('coalesce(revoked_at, now())') }).returning(COLUMNS);
    return row as ApiKeyRow;
  });
}

/** The live key whose SHA-256 is `digestHex`, if any. */
export async function findLiveKey(digestHex: string): Promise<Pick<ApiKeyRow, 'name' | 'scopes'> | undefined> {
  return db()(TABLE).select('name', 'scopes').where({ key_sha256: digestHex }).whereNull('revoked_at').first();
}

/** The live key of a name (re-checked when a delegated run acts for it). */
export async function findLiveKeyByName(name: string): Promise<Pick<ApiKeyRow, 'name' | 'scopes'> | undefined> {
  return db()(TABLE).select('name', 'scopes').where({ name }).whereNull('revoked_at').first();
}
