/** REST routes of accounts; the detail includes the account's opportunities. */
import { ApiRouter } from '../routing.js';
import { createAccount, deleteAccount, getAccountDetail, updateAccount } from '../../shared/crm/accounts.js';
import { listAccounts } from '../../shared/crm/account.store.js';
import { account, accountInput, accountUpdate } from '../../shared/crm/crm.schemas.js';
import { accountDetail, accountParams, accountQuery } from './accounts.schemas.js';
import { listDescription, pageOf, toPage } from './common.schemas.js';

export function accountRoutes(): ApiRouter {
  return new ApiRouter()
    .route({
      method: 'get',
      path: '/api/v1/accounts',
      tags: ['crm'],
      summary: 'List accounts',
      description: `Filters: \`q\` (text search in name and domain), \`segment\`, \`industry\` (case-insensitive).\n\n${listDescription}`,
      auth: 'key-or-sales-or-sre',
      request: { query: accountQuery },
      responses: { 200: { description: 'A page of accounts', schema: pageOf(account, 'AccountPage') } },
      handler: async ({ query }) => toPage(await listAccounts({ search: query.q, segment: query.segment, industry: query.industry }, query)),
    })
    .route({
      method: 'post',
      path: '/api/v1/accounts',
      tags: ['crm'],
      summary: 'Create an account',
      description: 'Names and domains are unique case-insensitively (a duplicate is a 409 with `existing_account_id`); domains are stored lower-case.',
      auth: 'key-or-sales-or-sre',
      request: { body: accountInput },
      responses: { 201: { description: 'The account', schema: account } },
      errors: { 409: 'An account with this name or domain exists' },
      handler: ({ body }) => createAccount(body),
    })
    .route({
      method: 'get',
      path: '/api/v1/accounts/{account_id}',
      tags: ['crm'],
      summary: 'Get an account with its opportunities',
      auth: 'key-or-sales-or-sre',
      request: { params: accountParams },
      responses: { 200: { description: 'The account and its opportunities (newest first)', schema: accountDetail } },
      handler: ({ params }) => getAccountDetail(params.account_id),
    })
    .route({
      method: 'patch',
      path: '/api/v1/accounts/{account_id}',
      tags: ['crm'],
      summary: 'Update an account',
      auth: 'key-or-sales-or-sre',
      request: { params: accountParams, body: accountUpdate },
      responses: { 200: { description: 'The account', schema: account } },
      errors: { 409: 'Another account has this name or domain' },
      handler: ({ params, body }) => updateAccount(params.account_id, body),
    })
    .route({
      method: 'delete',
      path: '/api/v1/accounts/{account_id}',
      tags: ['crm'],
      summary: 'Delete an account',
      description: 'Its opportunities are kept, unlinked (`account_id` becomes null); so are leads converted into it.',
      auth: 'key-or-sales-or-sre',
      request: { params: accountParams },
      responses: { 204: { description: 'Deleted' } },
      handler: async ({ params }, ctx) => {
        await deleteAccount(params.account_id);
        ctx.status = 204;
      },
    });
}
