/** Accounts: one per company name and per domain (case-insensitive); the detail carries the opportunities. */
import { isUniqueViolation } from '../db/index.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { deleteAccount as deleteRow, findAccount, findAccountByNameOrDomain, insertAccount, updateAccount as updateRow } from './account.store.js';
import { publishCrmEvent } from './events.js';
import { opportunitiesOfAccount } from './opportunity.store.js';
import type { Account, AccountInput, AccountUpdate, Opportunity } from './crm.schemas.js';

async function conflictOf(err: unknown, input: AccountUpdate): Promise<never> {
  if (isUniqueViolation(err, 'crm_accounts_name_ci') || isUniqueViolation(err, 'crm_accounts_domain_ci')) {
    const byName = isUniqueViolation(err, 'crm_accounts_name_ci');
    const existing = await findAccountByNameOrDomain(byName ? input.name! : '', byName ? null : input.domain!);
    throw new ConflictError(`An account with this ${byName ? 'name' : 'domain'} already exists.`, [{ path: `body.${byName ? 'name' : 'domain'}`, message: 'is already used by another account' }], {
      existing_account_id: existing?.id ?? null,
    });
  }
  throw err;
}

export async function createAccount(input: AccountInput): Promise<Account> {
  const account = await insertAccount(input).catch((err) => conflictOf(err, input));
  publishCrmEvent('account.changed', { id: account.id, change: 'created' });
  return account;
}

export async function updateAccount(id: string, changes: AccountUpdate): Promise<Account> {
  const account = await updateRow(id, changes).catch((err) => conflictOf(err, changes));
  if (!account) throw new NotFoundError(`No account ${id}.`);
  publishCrmEvent('account.changed', { id, change: 'updated' });
  return account;
}

/** The account with its linked opportunities. */
export async function getAccountDetail(id: string): Promise<Account & { opportunities: Opportunity[] }> {
  const account = await findAccount(id);
  if (!account) throw new NotFoundError(`No account ${id}.`);
  return { ...account, opportunities: await opportunitiesOfAccount(id) };
}

/** Deletes an account; its opportunities stay, unlinked (account_id becomes null). */
export async function deleteAccount(id: string): Promise<void> {
  if (!(await deleteRow(id))) throw new NotFoundError(`No account ${id}.`);
  publishCrmEvent('account.changed', { id, change: 'deleted' });
}
