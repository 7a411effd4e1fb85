/** The portal's contacts: a person's own address book. */
import { ApiRouter } from '../routing.js';
import { NotFoundError } from '../../shared/errors.js';
import { deleteContact, findContact, insertContact, listContacts, updateContact } from '../../shared/portal/contacts.store.js';
import { contactSchema } from '../../shared/portal/portal.schemas.js';
import { actingUserNote, callerOf, portalRouter } from './caller.js';
import { userHeader } from './common.schemas.js';
import { contactInput, contactList, contactParams, contactQuery, contactUpdate } from './contacts.schemas.js';

export function contactRoutes(): ApiRouter {
  const tags = ['portal: contacts'];
  const notFound = (id: string) => new NotFoundError(`No contact ${id}.`);
  return portalRouter()
    .route({
      method: 'get',
      path: '/api/portal/contacts',
      tags,
      summary: 'My contacts',
      description: `Filters combine: \`search\` matches name, email, phone or company (substring, any case); \`tags\` (comma-separated or repeated) keeps contacts with every tag; \`favorite=true\` favorites only. Favorites first, then by name. ${actingUserNote}`,
      auth: 'key-or-person',
      request: {
        headers: userHeader,
        query: contactQuery,
      },
      responses: { 200: { description: 'Contacts', schema: contactList } },
      handler: async ({ query }, ctx) => ({ contacts: await listContacts(callerOf(ctx).userId, query) }),
    })
    .route({
      method: 'post',
      path: '/api/portal/contacts',
      tags,
      summary: 'Add a contact',
      description: actingUserNote,
      auth: 'key-or-person',
      request: { headers: userHeader, body: contactInput },
      responses: { 201: { description: 'The contact', schema: contactSchema } },
      handler: async ({ body }, ctx) => insertContact(callerOf(ctx).userId, body),
    })
    .route({
      method: 'get',
      path: '/api/portal/contacts/{contact_id}',
      tags,
      summary: 'One of my contacts',
      description: actingUserNote,
      auth: 'key-or-person',
      request: { headers: userHeader, params: contactParams },
      responses: { 200: { description: 'The contact', schema: contactSchema } },
      handler: async ({ params: p }, ctx) => (await findContact(callerOf(ctx).userId, p.contact_id)) ?? Promise.reject(notFound(p.contact_id)),
    })
    .route({
      method: 'patch',
      path: '/api/portal/contacts/{contact_id}',
      tags,
      summary: 'Change a contact',
      description: actingUserNote,
      auth: 'key-or-person',
      request: { headers: userHeader, params: contactParams, body: contactUpdate },
      responses: { 200: { description: 'The contact', schema: contactSchema } },
      handler: async ({ params: p, body }, ctx) => (await updateContact(callerOf(ctx).userId, p.contact_id, body)) ?? Promise.reject(notFound(p.contact_id)),
    })
    .route({
      method: 'delete',
      path: '/api/portal/contacts/{contact_id}',
      tags,
      summary: 'Delete a contact',
      description: actingUserNote,
      auth: 'key-or-person',
      request: { headers: userHeader, params: contactParams },
      responses: { 204: { description: 'Deleted' } },
      handler: async ({ params: p }, ctx) => {
        if (!(await deleteContact(callerOf(ctx).userId, p.contact_id))) throw notFound(p.contact_id);
        ctx.status = 204;
      },
    });
}
