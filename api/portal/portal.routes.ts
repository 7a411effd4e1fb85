/**
 * The self-service portal's own data (spec 002 § Self-service portal): profile, contacts, documents
 * and support cases. Every route acts for one person (see caller.ts) and sees only their rows.
 */
import type { Context } from 'koa';
import { holdSlot, takeLimit } from '../../shared/limits.js';
import { ApiRouter } from '../routing.js';
import { z, uuid } from '../../shared/zod.js';
import { NotFoundError } from '../../shared/errors.js';
import { getProfile, updateProfile } from '../../shared/users/users.store.js';
import { profileSchema } from '../../shared/users/profile.js';
import { PHONE_CODE_TEMPLATE, requestPhoneCode, verifyPhoneCode } from '../../shared/portal/phone-proof.js';
import { deleteContact, findContact, insertContact, listContacts, updateContact } from '../../shared/portal/contacts.store.js';
import { deleteDocument, findDocument, listDocuments, updateDocumentMeta } from '../../shared/portal/documents.store.js';
import { documentStorage } from '../../shared/portal/document-storage.js';
import { readUpload, reindexDocument, searchDocuments, storeUpload } from '../../shared/portal/documents.js';
import { listCases, listStaff } from '../../shared/portal/cases.store.js';
import { assignCaseTo, caseWithComments, commentOnCase, createCase, editCase, transitionCase } from '../../shared/portal/cases.js';
import { transitionsMarkdown } from '../../shared/portal/case-transitions.js';
import {
  caseSchema, casePriorities, caseStatuses, commentSchema, contactInput, contactSchema, contactUpdate, documentSchema,
  profileUpdateSchema, ragStatuses, searchHitSchema, phoneCodeRequestSchema, phoneCodeSentSchema, phoneCodeVerifySchema,
} from '../../shared/portal/schemas.js';
import { actingUserNote, portalCaller, userHeader } from './caller.js';

const list = <S extends z.ZodType<unknown, string[] | undefined>>(s: S) => z.union([z.string(), z.array(z.string())]).optional().transform((v) => (v === undefined ? undefined : [v].flat().flatMap((x) => x.split(',')).map((x) => x.trim()).filter(Boolean))).pipe(s);
const flag = z.enum(['true', 'false']).optional().transform((v) => (v === undefined ? undefined : v === 'true'));
const publicDocument = <T extends { owner_id: string }>({ owner_id: _o, ...d }: T) => d;

function profileRoutes(r: ApiRouter): ApiRouter {
  const tags = ['portal: profile'];
  return r
    .route({
      method: 'get',
      path: '/api/portal/profile',
      tags,
      summary: 'My profile',
      description: `email, display_name and roles are copies from the identity provider (refreshed at each sign-in and every AUTH_ROLES_REFRESH of a browser session, read-only here); phone is the proven number (POST /api/portal/profile/phone). ${actingUserNote}`,
      auth: 'user',
      request: { headers: userHeader },
      responses: { 200: { description: 'The profile', schema: profileSchema } },
      handler: async (_i, ctx) => getProfile((await portalCaller(ctx)).userId),
    })
    .route({
      method: 'patch',
      path: '/api/portal/profile',
      tags,
      summary: 'Change my timezone or notification preferences, or remove my phone',
      description: `timezone: an IANA name (Europe/Paris); phone: only null (removes it; the messaging channels no longer know this person by it) or the profile's current number unchanged — a new number is proven with a code first (POST /api/portal/profile/phone, then …/verify), any other value is a 400 naming body.phone; notification_preferences replaces the stored object: \`{"channels": {"email": true, "sms": false}, "quiet_hours": {"enabled": true, "start": "22:00", "end": "07:00"}}\` (a missing channel is on; quiet hours are local to timezone). ${actingUserNote}`,
      auth: 'user',
      request: { headers: userHeader, body: profileUpdateSchema },
      responses: { 200: { description: 'The changed profile', schema: profileSchema } },
      handler: async ({ body }, ctx) => updateProfile((await portalCaller(ctx)).userId, body),
    })
    .route({
      method: 'post',
      path: '/api/portal/profile/phone',
      tags,
      summary: 'Send a code to prove a new phone number',
      description: [
        'The messaging channels (messaging app, SMS, voice) find a person by phone number, so a number is set only once proven: this sends a 6-digit code to `phone` and answers 202; POST /api/portal/profile/phone/verify enters it. Until then the number routes nothing to this account, and the profile keeps its current number.',
        `The code goes out through the messaging app as the approved template \`${PHONE_CODE_TEMPLATE}\` (CHATAPP_TEMPLATE_SIDS ${PHONE_CODE_TEMPLATE}=HX…, its one variable the code), or as text while the number's 24-hour window is open; otherwise by SMS when SMS_FROM_NUMBER is set. Only a hash of the code is stored; it can be entered for PHONE_CODE_TTL_MINUTES (10), once. Asking again replaces the previous code.`,
        'The answer is the same for every well-formed number, whoever has it: a number of another account gets 202 too, but no code is sent to it and no code proves it (so the answers never tell which numbers are registered).',
        `At most LIMIT_PHONE_CODES_PER_HOUR (5) requests per person per hour: over it, 429 with Retry-After. ${actingUserNote}`,
      ].join('\n\n'),
      auth: 'user',
      request: { headers: userHeader, body: phoneCodeRequestSchema },
      responses: { 202: { description: 'A code is on its way (whoever has the number)', schema: phoneCodeSentSchema } },
      errors: { 429: 'Over LIMIT_PHONE_CODES_PER_HOUR (Retry-After)' },
      handler: async ({ body }, ctx) => {
        const sent = await requestPhoneCode((await portalCaller(ctx)).userId, body.phone);
        ctx.status = 202;
        return sent;
      },
    })
    .route({
      method: 'post',
      path: '/api/portal/profile/phone/verify',
      tags,
      summary: 'Enter the code and set the proven number',
      description: [
        "The right code within PHONE_CODE_TTL_MINUTES sets the number it was sent to on the profile (the code is used up) and answers the profile: from then on that number's messaging-app and SMS messages reach this person.",
        "The messaging-app conversation window follows the change: the previous number's 24-hour window no longer applies to this person, and the new number's opens with its first inbound message.",
        'A wrong, expired or used code, none asked for, or a number of another account: the same 400 naming body.code. At most LIMIT_PHONE_CODE_ATTEMPTS (5) codes entered per person per PHONE_CODE_TTL_MINUTES, right or wrong: over it, 429 with Retry-After.',
        actingUserNote,
      ].join('\n\n'),
      auth: 'user',
      request: { headers: userHeader, body: phoneCodeVerifySchema },
      responses: { 200: { description: 'The profile with its proven number', schema: profileSchema } },
      errors: { 429: 'Over LIMIT_PHONE_CODE_ATTEMPTS (Retry-After)' },
      handler: async ({ body }, ctx) => verifyPhoneCode((await portalCaller(ctx)).userId, body.code),
    });
}

function contactRoutes(r: ApiRouter): ApiRouter {
  const tags = ['portal: contacts'];
  const params = z.object({ contact_id: uuid() });
  const notFound = (id: string) => new NotFoundError(`No contact ${id}.`);
  return r
    .route({
      method: 'get',
      path: '/api/portal/contacts',
      tags,
      summary: 'My contacts',
      description: `Filters combine: \`search\` matches name, email, phone or company (substring, any case); \`tags\` (comma-separated or repeated) keeps contacts with every tag; \`favorite=true\` favorites only. Favorites first, then by name. ${actingUserNote}`,
      auth: 'user',
      request: {
        headers: userHeader,
        query: z.object({ search: z.string().max(200).optional(), tags: list(z.array(z.string().max(50)).max(20).optional()), favorite: flag }),
      },
      responses: { 200: { description: 'Contacts', schema: z.object({ contacts: z.array(contactSchema) }) } },
      handler: async ({ query }, ctx) => ({ contacts: await listContacts((await portalCaller(ctx)).userId, query) }),
    })
    .route({
      method: 'post',
      path: '/api/portal/contacts',
      tags,
      summary: 'Add a contact',
      description: actingUserNote,
      auth: 'user',
      request: { headers: userHeader, body: contactInput },
      responses: { 201: { description: 'The contact', schema: contactSchema } },
      handler: async ({ body }, ctx) => insertContact((await portalCaller(ctx)).userId, body),
    })
    .route({
      method: 'get',
      path: '/api/portal/contacts/{contact_id}',
      tags,
      summary: 'One of my contacts',
      description: actingUserNote,
      auth: 'user',
      request: { headers: userHeader, params },
      responses: { 200: { description: 'The contact', schema: contactSchema } },
      handler: async ({ params: p }, ctx) => (await findContact((await portalCaller(ctx)).userId, p.contact_id)) ?? Promise.reject(notFound(p.contact_id)),
    })
    .route({
      method: 'patch',
      path: '/api/portal/contacts/{contact_id}',
      tags,
      summary: 'Change a contact',
      description: actingUserNote,
      auth: 'user',
      request: { headers: userHeader, params, body: contactUpdate },
      responses: { 200: { description: 'The contact', schema: contactSchema } },
      handler: async ({ params: p, body }, ctx) => (await updateContact((await portalCaller(ctx)).userId, p.contact_id, body)) ?? Promise.reject(notFound(p.contact_id)),
    })
    .route({
      method: 'delete',
      path: '/api/portal/contacts/{contact_id}',
      tags,
      summary: 'Delete a contact',
      description: actingUserNote,
      auth: 'user',
      request: { headers: userHeader, params },
      responses: { 204: { description: 'Deleted' } },
      handler: async ({ params: p }, ctx) => {
        if (!(await deleteContact((await portalCaller(ctx)).userId, p.contact_id))) throw notFound(p.contact_id);
        ctx.status = 204;
      },
    });
}

function documentRoutes(r: ApiRouter): ApiRouter {
  const tags = ['portal: documents'];
  const params = z.object({ document_id: uuid() });
  const notFound = (id: string) => new NotFoundError(`No document ${id}.`);
  const docOut = documentSchema;
  return r
    .route({
      method: 'get',
      path: '/api/portal/documents',
      tags,
      summary: 'My documents',
      description: `Newest first; filters \`category\`, \`tags\` (every one), \`rag_status\`. ${actingUserNote}`,
      auth: 'user',
      request: {
        headers: userHeader,
        query: z.object({ category: z.string().max(100).optional(), tags: list(z.array(z.string().max(50)).max(20).optional()), rag_status: z.enum(ragStatuses).optional() }),
      },
      responses: { 200: { description: 'Documents', schema: z.object({ documents: z.array(docOut) }) } },
      handler: async ({ query }, ctx) => ({ documents: (await listDocuments((await portalCaller(ctx)).userId, query)).map(publicDocument) }),
    })
    .route({
      method: 'post',
      path: '/api/portal/documents',
      tags,
      summary: 'Upload a document',
      description: `multipart/form-data with a \`file\` part (PDF, DOCX, HTML, plain text, Markdown or CSV) and optional fields \`category\` and \`tags\` (comma-separated). The body is read as it streams: past DOCUMENT_MAX_BYTES (default 20 MB) the upload stops with 413 and nothing is stored. Per person: LIMIT_UPLOADS_PER_HOUR uploads and LIMIT_UPLOAD_BYTES_PER_HOUR bytes (the request's Content-Length) per hour, LIMIT_UPLOADS_CONCURRENT at once; over one, 429 with Retry-After before the body is read. The document starts \`pending\`; the portal.index-document job moves it to processing, then indexed, or failed with \`failure_reason\` (a file that cannot be read, or whose reading passes DOCUMENT_EXTRACT_TIMEOUT_MS or DOCUMENT_EXTRACT_MAX_MEMORY_MB, each named in the reason). ${actingUserNote}`,
      auth: 'user',
      request: { headers: userHeader },
      responses: { 201: { description: 'The stored document (rag_status pending)', schema: docOut } },
      errors: { 400: 'No `file` part, or a bad field', 413: 'The file is larger than DOCUMENT_MAX_BYTES (nothing stored)', 415: 'Not multipart/form-data, or an unsupported file type', 429: 'Over a per-person upload limit (LIMIT_UPLOADS_PER_HOUR, LIMIT_UPLOAD_BYTES_PER_HOUR, LIMIT_UPLOADS_CONCURRENT); Retry-After says when to try again' },
      handler: async (_i, ctx) => {
        const caller = await portalCaller(ctx);
        return publicDocument(await limitedUpload(caller.userId, ctx, () => readUpload(ctx.req, ctx.get('Content-Type')).then((u) => storeUpload(caller.userId, u))));
      },
    })
    .route({
      method: 'get',
      path: '/api/portal/documents/search',
      tags,
      summary: 'Search my documents',
      description: `Full text (PostgreSQL, English stemming) over my indexed documents: web-search syntax (\`"exact phrase"\`, \`-word\`, \`or\`). Hits are ranked by ts_rank, each with the file name and a snippet (ts_headline, matches in ** **). ${actingUserNote}`,
      auth: 'user',
      request: { headers: userHeader, query: z.object({ q: z.string().trim().min(1).max(500), limit: z.coerce.number().int().min(1).max(50).default(10) }) },
      responses: { 200: { description: 'Hits, best first', schema: z.object({ hits: z.array(searchHitSchema) }) } },
      handler: async ({ query }, ctx) => ({ hits: await searchDocuments((await portalCaller(ctx)).userId, query.q, query.limit) }),
    })
    .route({
      method: 'get',
      path: '/api/portal/documents/{document_id}',
      tags,
      summary: 'One of my documents',
      description: actingUserNote,
      auth: 'user',
      request: { headers: userHeader, params },
      responses: { 200: { description: 'The document', schema: docOut } },
      handler: async ({ params: p }, ctx) => {
        const doc = await findDocument(p.document_id, (await portalCaller(ctx)).userId);
        if (!doc) throw notFound(p.document_id);
        return publicDocument(doc);
      },
    })
    .route({
      method: 'patch',
      path: '/api/portal/documents/{document_id}',
      tags,
      summary: 'Rename or re-file a document',
      description: actingUserNote,
      auth: 'user',
      request: {
        headers: userHeader,
        params,
        body: z.object({ filename: z.string().trim().min(1).max(255), category: z.string().max(100).nullable(), tags: z.array(z.string().trim().min(1).max(50)).max(30) }).partial().strict(),
      },
      responses: { 200: { description: 'The document', schema: docOut } },
      handler: async ({ params: p, body }, ctx) => {
        const doc = await updateDocumentMeta((await portalCaller(ctx)).userId, p.document_id, body);
        if (!doc) throw notFound(p.document_id);
        return publicDocument(doc);
      },
    })
    .route({
      method: 'get',
      path: '/api/portal/documents/{document_id}/content',
      tags,
      summary: 'Download a document',
      description: `The file as uploaded, with its content type, as an attachment. ${actingUserNote}`,
      auth: 'user',
      request: { headers: userHeader, params },
      responses: { 200: { description: 'The file', contentType: 'application/octet-stream', schema: z.string().openapi({ format: 'binary' }) } },
      handler: async ({ params: p }, ctx) => {
        const doc = await findDocument(p.document_id, (await portalCaller(ctx)).userId);
        const content = doc && (await documentStorage().get(doc.document_id));
        if (!doc || !content) throw notFound(p.document_id);
        ctx.set('Content-Type', doc.content_type);
        ctx.set('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(doc.filename)}`);
        ctx.set('X-Content-Type-Options', 'nosniff');
        ctx.body = content;
      },
    })
    .route({
      method: 'post',
      path: '/api/portal/documents/{document_id}/reindex',
      tags,
      summary: 'Index a document again',
      description: `Back to pending and a new indexing job; its chunks are replaced when it finishes. ${actingUserNote}`,
      auth: 'user',
      request: { headers: userHeader, params },
      responses: { 202: { description: 'Queued', schema: docOut } },
      handler: async ({ params: p }, ctx) => publicDocument(await reindexDocument((await portalCaller(ctx)).userId, p.document_id)),
    })
    .route({
      method: 'delete',
      path: '/api/portal/documents/{document_id}',
      tags,
      summary: 'Delete a document',
      description: `The document, its content and its chunks (no longer found by search). ${actingUserNote}`,
      auth: 'user',
      request: { headers: userHeader, params },
      responses: { 204: { description: 'Deleted' } },
      handler: async ({ params: p }, ctx) => {
        if (!(await deleteDocument((await portalCaller(ctx)).userId, p.document_id))) throw notFound(p.document_id);
        ctx.status = 204;
      },
    });
}

function caseRoutes(r: ApiRouter): ApiRouter {
  const tags = ['portal: cases'];
  const params = z.object({ case_id: uuid() });
  const caseDetail = caseSchema.extend({ comments: z.array(commentSchema), allowed_moves: z.array(z.enum(caseStatuses)) }).openapi('PortalCaseDetail');
  const visibility = 'Requesters see the cases they opened; staff (role staff) see and work every case. A case the caller cannot see answers 404.';
  return r
    .route({
      method: 'get',
      path: '/api/portal/cases',
      tags,
      summary: 'Support cases',
      description: `${visibility} Filters: \`status\` (comma-separated), \`priority\`, \`assignee_id\`, \`mine=true\` (only cases I opened), \`q\` (text in the title or description). P1 first, then newest. Served from v_portal_cases_full. ${actingUserNote}`,
      auth: 'user',
      request: {
        headers: userHeader,
        query: z.object({
          status: list(z.array(z.enum(caseStatuses)).optional()),
          priority: z.enum(casePriorities).optional(),
          assignee_id: uuid().optional(),
          mine: flag,
          q: z.string().trim().max(200).optional(),
        }),
      },
      responses: { 200: { description: 'Cases', schema: z.object({ cases: z.array(caseSchema) }) } },
      handler: async ({ query }, ctx) => ({ cases: await listCases(await portalCaller(ctx), query) }),
    })
    .route({
      method: 'post',
      path: '/api/portal/cases',
      tags,
      summary: 'Open a case',
      description: `The caller is the requester; the case starts open. ${actingUserNote}`,
      auth: 'user',
      request: {
        headers: userHeader,
        body: z.object({ title: z.string().trim().min(1, 'must not be empty').max(200), description: z.string().max(20_000).default(''), priority: z.enum(casePriorities).default('P3') }).strict(),
      },
      responses: { 201: { description: 'The case', schema: caseSchema } },
      handler: async ({ body }, ctx) => createCase(await portalCaller(ctx), body),
    })
    .route({
      method: 'get',
      path: '/api/portal/cases/{case_id}',
      tags,
      summary: 'A case with its comment thread',
      description: `${visibility} \`allowed_moves\`: the statuses the caller may move it to. ${actingUserNote}`,
      auth: 'user',
      request: { headers: userHeader, params },
      responses: { 200: { description: 'The case', schema: caseDetail } },
      handler: async ({ params: p }, ctx) => caseWithComments(await portalCaller(ctx), p.case_id),
    })
    .route({
      method: 'patch',
      path: '/api/portal/cases/{case_id}',
      tags,
      summary: 'Edit title, description or priority',
      description: `The requester or staff, while the case is not closed (409). Status moves go through /status. ${actingUserNote}`,
      auth: 'user',
      request: {
        headers: userHeader,
        params,
        body: z.object({ title: z.string().trim().min(1, 'must not be empty').max(200), description: z.string().max(20_000), priority: z.enum(casePriorities) }).partial().strict(),
      },
      responses: { 200: { description: 'The case', schema: caseSchema } },
      errors: { 409: 'The case is closed' },
      handler: async ({ params: p, body }, ctx) => editCase(await portalCaller(ctx), p.case_id, body),
    })
    .route({
      method: 'post',
      path: '/api/portal/cases/{case_id}/status',
      tags,
      summary: 'Move a case to another status',
      description: `${transitionsMarkdown}\n\n${actingUserNote}`,
      auth: 'user',
      request: { headers: userHeader, params, body: z.object({ status: z.enum(caseStatuses) }).strict() },
      responses: { 200: { description: 'The moved case', schema: caseSchema } },
      errors: { 409: 'The move is not allowed to the caller from the current status; the problem names `allowed_moves`' },
      handler: async ({ params: p, body }, ctx) => transitionCase(await portalCaller(ctx), p.case_id, body.status),
    })
    .route({
      method: 'post',
      path: '/api/portal/cases/{case_id}/comments',
      tags,
      summary: 'Comment on a case',
      description: `The requester or staff; not on a closed case (409). A requester's comment on a waiting case moves it back to in_progress. ${actingUserNote}`,
      auth: 'user',
      request: { headers: userHeader, params, body: z.object({ body: z.string().trim().min(1, 'must not be empty').max(20_000) }).strict() },
      responses: { 201: { description: 'The case with its thread', schema: caseDetail } },
      errors: { 409: 'The case is closed' },
      handler: async ({ params: p, body }, ctx) => commentOnCase(await portalCaller(ctx), p.case_id, body.body),
    })
    .route({
      method: 'get',
      path: '/api/portal/staff',
      tags,
      summary: 'People a case can be assigned to (staff)',
      description: 'Users holding the staff role, by name: the choices of POST /api/portal/cases/{case_id}/assign.',
      auth: 'staff',
      responses: {
        200: {
          description: 'Staff members',
          schema: z.object({ staff: z.array(z.object({ user_id: z.string(), display_name: z.string().nullable(), email: z.string().nullable() }).openapi('StaffMember')) }),
        },
      },
      handler: async () => ({ staff: await listStaff() }),
    })
    .route({
      method: 'post',
      path: '/api/portal/cases/{case_id}/assign',
      tags,
      summary: 'Assign a case (staff)',
      description: `Staff only (role staff; an API-key caller's X-User-Id must be staff). \`assignee_id\`: a user with the staff role, or null to unassign. Not on a closed case (closed is final): 409, whose problem names \`current_status\` and \`allowed_moves\` (none), as a refused status move does. ${actingUserNote}`,
      auth: 'staff',
      request: { headers: userHeader, params, body: z.object({ assignee_id: uuid().nullable() }).strict() },
      responses: { 200: { description: 'The case', schema: caseSchema } },
      errors: { 409: 'The case is closed; the problem names `current_status` and `allowed_moves`' },
      handler: async ({ params: p, body }, ctx) => {
        const caller = await portalCaller(ctx);
        if (!caller.staff) throw new NotFoundError(`No case ${p.case_id}.`);
        return assignCaseTo(caller, p.case_id, body.assignee_id);
      },
    });
}

export function portalRoutes(): ApiRouter {
  const r = new ApiRouter();
  return caseRoutes(documentRoutes(contactRoutes(profileRoutes(r))));
}

/** Runs an upload within the person's limits: count and bytes per hour (the declared length, before reading), uploads at once. */
async function limitedUpload<T>(userId: string, ctx: Context, upload: () => Promise<T>): Promise<T> {
  await takeLimit('uploads', userId);
  const declared = Number(ctx.get('Content-Length'));
  if (declared > 0) await takeLimit('uploadBytes', userId, declared);
  const release = await holdSlot('uploadsInProgress', userId);
  try {
    return await upload();
  } finally {
    await release();
  }
}
