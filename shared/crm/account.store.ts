/** Queries of crm_accounts. */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import { containsPattern, paginate, type KeysetPage, type KeysetPageRequest, type SortField } from './pagination.js';
import type { Account, AccountInput, AccountUpdate } from './crm.schemas.js';

const TABLE = 'crm_accounts';
const COLUMNS = ['id', 'name', 'domain', 'industry', 'segment', 'created_at', 'updated_at'].map((c) => `a.${c}`);

interface AccountRow extends Omit<Account, 'created_at' | 'updated_at'> {
  created_at: Date;
  updated_at: Date;
}

const toDomain = (row: AccountRow): Account => ({ ...row, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() });

export const accountSorts: Record<string, SortField> = {
  created_at: { sql: 'a.created_at', type: 'timestamptz' },
  updated_at: { sql: 'a.updated_at', type: 'timestamptz' },
  name: { sql: 'a.name', type: 'text' },
};

export interface AccountFilters {
  search?: string;
  segment?: string;
  industry?: string;
}

export async function listAccounts(filters: AccountFilters, page: KeysetPageRequest, k: Knex = db()): Promise<KeysetPage<Account>> {
  const q = k(`${TABLE} as a`).select(COLUMNS);
  if (filters.search) q.where((w) => w.whereILike('a.name', containsPattern(filters.search!)).orWhereILike('a.domain', containsPattern(filters.search!)));
  if (filters.segment) q.where('a.segment', filters.segment);
  if (filters.industry) q.whereRaw('lower(a.industry) = lower(?)', [filters.industry]);
  const result = await paginate<AccountRow>(q, accountSorts, 'a.id', page);
  return { items: result.items.map(toDomain), next_cursor: result.next_cursor };
}

export async function findAccount(id: string, k: Knex = db()): Promise<Account | undefined> {
  const row = await k(`${TABLE} as a`).select(COLUMNS).where('a.id', id).first();
  return row && toDomain(row);
}

/** An existing account with this name or this domain (both case-insensitive). */
export async function findAccountByNameOrDomain(name: string, domain: string | null, k: Knex = db()): Promise<Account | undefined> {
  const row = await k(`${TABLE} as a`)
    .select(COLUMNS)
    .whereRaw('lower(a.name) = lower(?)', [name])
    .modify((q) => {
      if (domain) q.orWhereRaw('lower(a.domain) = lower(?)', [domain]);
    })
    .orderByRaw('(lower(a.name) = lower(?)) desc', [name])
    .first();
  return row && toDomain(row);
}

export async function insertAccount(input: AccountInput, k: Knex = db()): Promise<Account> {
  const [row] = await k(TABLE).insert(input).returning(COLUMNS.map((c) => c.slice(2)));
  return toDomain(row);
}

/** Inserts unless an account with the same name or domain exists (concurrent conversions); undefined when one does. */
export async function insertAccountIfAbsent(k: Knex, input: AccountInput): Promise<Account | undefined> {
  const { rows } = await k.raw(
    `insert into ${TABLE} (name, domain) values (?, ?) on conflict do nothing returning ${COLUMNS.map((c) => c.slice(2)).join(', ')}`,
    [input.name, input.domain ?? null],
  );
  return rows[0] && toDomain(rows[0]);
}

export async function updateAccount(id: string, changes: AccountUpdate, k: Knex = db()): Promise<Account | undefined> {
  const q = k(TABLE).where({ id });
  const [row] = Object.keys(changes).length
    ? await q.update(changes).returning(COLUMNS.map((c) => c.slice(2)))
    : await q.select(COLUMNS.map((c) => c.slice(2)));
  return row && toDomain(row);
}

export async function deleteAccount(id: string, k: Knex = db()): Promise<boolean> {
  return (await k(TABLE).where({ id }).delete()) > 0;
}
