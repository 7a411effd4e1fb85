/**
 * The portal's agent tools: a person's own documents, contacts, support cases and past conversations.
 * Each works only on the rows of the person the call acts for (caller.user_id), as the portal API
 * does for a signed-in person; without a person (a key not acting as a user) there is nothing to read.
 */
import { defineTool, type ToolContext } from '../tools.js';
import { z, uuid } from '../zod.js';
import { ValidationError } from '../errors.js';
import { searchDocuments } from './documents.js';
import { listContacts } from './contacts.store.js';
import { listCases } from './cases.store.js';
import { caseWithComments, createCase } from './cases.js';
import { caseStatuses, casePriorities } from './portal.schemas.js';
import { listSessions, sessionHistoryRows } from '../sessions/sessions.store.js';

const executor = 'portal';

/** The person a portal tool works for; a call without one is refused. */
function ownerOf(ctx: ToolContext): string {
  if (!ctx.caller.user_id) throw new ValidationError(`${ctx.tool} works on a person's own data; it is only available to the assistant of a person (or a key acting as a user).`);
  return ctx.caller.user_id;
}

/** The person's own view of cases: as a requester, whatever their roles (staff work cases in the portal itself). */
const asRequester = (ctx: ToolContext) => ({ userId: ownerOf(ctx), staff: false });

export const portalTools = [
  defineTool({
    name: 'search_documents',
    description:
      "Searches the documents the user uploaded to the portal (full text; use key words or a \"quoted phrase\"). Returns the best passages with the file name of each; name the file when you answer from it. Only the current user's documents are searched.",
    executor,
    changesData: false,
    input: z.object({
      query: z.string().trim().min(1).max(500).describe('words or a "quoted phrase" to look for'),
      limit: z.number().int().min(1).max(10).default(5).describe('how many passages to return'),
    }),
    handler: async (input, ctx) => {
      const hits = await searchDocuments(ownerOf(ctx), input.query, input.limit);
      return { hits: hits.map((h) => ({ filename: h.filename, document_id: h.document_id, snippet: h.snippet, rank: Number(h.rank.toFixed(4)) })) };
    },
  }),
  defineTool({
    name: 'portal_list_contacts',
    description: "The user's own contacts (name, email, phone, company, tags), favourites first; `search` matches name, email, phone or company.",
    executor,
    changesData: false,
    input: z.object({ search: z.string().trim().min(1).max(200).optional(), limit: z.number().int().min(1).max(100).default(20) }),
    handler: async ({ search, limit }, ctx) => ({ contacts: (await listContacts(ownerOf(ctx), { search })).slice(0, limit) }),
  }),
  defineTool({
    name: 'portal_list_cases',
    description: 'The support cases the user opened (status, priority, title), most urgent first.',
    executor,
    changesData: false,
    input: z.object({ status: z.array(z.enum(caseStatuses)).optional(), limit: z.number().int().min(1).max(100).default(20) }),
    handler: async ({ status, limit }, ctx) => ({ cases: (await listCases(asRequester(ctx), { status })).slice(0, limit) }),
  }),
  defineTool({
    name: 'portal_get_case',
    description: 'One of the user\'s own support cases with its comments and the status moves the user may make.',
    executor,
    changesData: false,
    input: z.object({ case_id: uuid() }),
    handler: async ({ case_id }, ctx) => caseWithComments(asRequester(ctx), case_id),
  }),
  defineTool({
    name: 'portal_open_case',
    description: 'Opens a support case for the user (title, description, priority P1 most urgent … P4, default P3).',
    executor,
    changesData: true,
    input: z.object({ title: z.string().trim().min(1).max(200), description: z.string().trim().min(1).max(10_000), priority: z.enum(casePriorities).default('P3') }),
    handler: async (input, ctx) => createCase(asRequester(ctx), input),
  }),
  defineTool({
    name: 'portal_list_sessions',
    description: "The user's own past conversations (newest first): status, channel it started on, message count and summary.",
    executor,
    changesData: false,
    input: z.object({ limit: z.number().int().min(1).max(50).default(10) }),
    handler: async ({ limit }, ctx) => {
      const sessions = await listSessions(ownerOf(ctx), limit);
      const rows = await sessionHistoryRows(sessions.map((s) => s.session_id));
      return { sessions: sessions.map((s) => ({ session_id: s.session_id, status: s.status, created_at: s.created_at, last_activity: s.last_activity, ...rows.get(s.session_id) })) };
    },
  }),
];
