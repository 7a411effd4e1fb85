/** The portal's documents: upload (multipart), list, download, re-index, delete and full-text search of a person's own files. */
import type { Context, Middleware } from 'koa';
import { holdSlot, takeLimit } from '../../shared/limits.js';
import { ApiRouter } from '../routing.js';
import { NotFoundError } from '../../shared/errors.js';
import { deleteDocument, findDocument, listDocuments, updateDocumentMeta } from '../../shared/portal/documents.store.js';
import { documentStorage } from '../../shared/portal/document-storage.js';
import { reindexDocument, searchDocuments, storeUpload } from '../../shared/portal/documents.js';
import { documentSchema } from '../../shared/portal/portal.schemas.js';
import { actingUserNote, callerOf, portalRouter } from './caller.js';
import { userHeader } from './common.schemas.js';
import { documentContent, documentList, documentParams, documentQuery, documentSearchQuery, documentUpdate, documentUpload, searchHits } from './documents.schemas.js';

const publicDocument = <T extends { owner_id: string }>({ owner_id: _o, ...d }: T) => d;

export function documentRoutes(): ApiRouter {
  const tags = ['portal: documents'];
  const notFound = (id: string) => new NotFoundError(`No document ${id}.`);
  const docOut = documentSchema;
  return portalRouter()
    .route({
      method: 'get',
      path: '/api/portal/documents',
      tags,
      summary: 'My documents',
      description: `Newest first; filters \`category\`, \`tags\` (every one), \`rag_status\`. ${actingUserNote}`,
      auth: 'key-or-person',
      request: {
        headers: userHeader,
        query: documentQuery,
      },
      responses: { 200: { description: 'Documents', schema: documentList } },
      handler: async ({ query }, ctx) => ({ documents: (await listDocuments(callerOf(ctx).userId, query)).map(publicDocument) }),
    })
    .route({
      method: 'post',
      path: '/api/portal/documents',
      tags,
      summary: 'Upload a document',
      description: `multipart/form-data with a \`file\` part (PDF, DOCX, HTML, plain text, Markdown or CSV) and optional fields \`category\` and \`tags\` (comma-separated). The body is read as it streams: past DOCUMENT_MAX_BYTES (default 20 MB) the upload stops with 413 and nothing is stored. Per person: LIMIT_UPLOADS_PER_HOUR uploads and LIMIT_UPLOAD_BYTES_PER_HOUR bytes (the request's Content-Length) per hour, LIMIT_UPLOADS_CONCURRENT at once; over one, 429 with Retry-After before the body is read. The document starts \`pending\`; the portal.index-document job moves it to processing, then indexed, or failed with \`failure_reason\` (a file that cannot be read, or whose reading passes DOCUMENT_EXTRACT_TIMEOUT_MS or DOCUMENT_EXTRACT_MAX_MEMORY_MB, each named in the reason). ${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: userHeader, multipart: documentUpload },
      // Limits are taken before the body is read: an upload over one is refused unread.
      use: [uploadLimits],
      responses: { 201: { description: 'The stored document (rag_status pending)', schema: docOut } },
      errors: { 400: 'No `file` part, or a bad field', 413: 'The file is larger than DOCUMENT_MAX_BYTES (nothing stored)', 415: 'Not multipart/form-data, or an unsupported file type', 429: 'Over a per-person upload limit (LIMIT_UPLOADS_PER_HOUR, LIMIT_UPLOAD_BYTES_PER_HOUR, LIMIT_UPLOADS_CONCURRENT); Retry-After says when to try again' },
      handler: async ({ upload }, ctx) => publicDocument(await storeUpload(callerOf(ctx).userId, { file: upload.file, category: upload.fields.category ?? null, tags: upload.fields.tags ?? [] })),
    })
    .route({
      method: 'get',
      path: '/api/portal/documents/search',
      tags,
      summary: 'Search my documents',
      description: `Full text (PostgreSQL, English stemming) over my indexed documents: web-search syntax (\`"exact phrase"\`, \`-word\`, \`or\`). Hits are ranked by ts_rank, each with the file name and a snippet (ts_headline, matches in ** **). ${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: userHeader, query: documentSearchQuery },
      responses: { 200: { description: 'Hits, best first', schema: searchHits } },
      handler: async ({ query }, ctx) => ({ hits: await searchDocuments(callerOf(ctx).userId, query.q, query.limit) }),
    })
    .route({
      method: 'get',
      path: '/api/portal/documents/{document_id}',
      tags,
      summary: 'One of my documents',
      description: actingUserNote,
      auth: 'key-or-person',
      request: { headers: userHeader, params: documentParams },
      responses: { 200: { description: 'The document', schema: docOut } },
      handler: async ({ params: p }, ctx) => {
        const doc = await findDocument(callerOf(ctx).userId, p.document_id);
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
      auth: 'key-or-person',
      request: {
        headers: userHeader,
        params: documentParams,
        body: documentUpdate,
      },
      responses: { 200: { description: 'The document', schema: docOut } },
      handler: async ({ params: p, body }, ctx) => {
        const doc = await updateDocumentMeta(callerOf(ctx).userId, p.document_id, body);
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
      auth: 'key-or-person',
      request: { headers: userHeader, params: documentParams },
      responses: { 200: { description: 'The file', contentType: 'application/octet-stream', schema: documentContent } },
      handler: async ({ params: p }, ctx) => {
        const doc = await findDocument(callerOf(ctx).userId, p.document_id);
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
      description: `Back to pending and a new indexing job; its chunks are replaced when it finishes. Counts as an upload of the document's size against LIMIT_UPLOADS_PER_HOUR and LIMIT_UPLOAD_BYTES_PER_HOUR. ${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: userHeader, params: documentParams },
      responses: { 202: { description: 'Queued', schema: docOut } },
      errors: { 429: 'Over LIMIT_UPLOADS_PER_HOUR or LIMIT_UPLOAD_BYTES_PER_HOUR (Retry-After); nothing is queued' },
      handler: async ({ params: p }, ctx) => publicDocument(await reindexDocument(callerOf(ctx).userId, p.document_id)),
    })
    .route({
      method: 'delete',
      path: '/api/portal/documents/{document_id}',
      tags,
      summary: 'Delete a document',
      description: `The document, its content and its chunks (no longer found by search). ${actingUserNote}`,
      auth: 'key-or-person',
      request: { headers: userHeader, params: documentParams },
      responses: { 204: { description: 'Deleted' } },
      handler: async ({ params: p }, ctx) => {
        if (!(await deleteDocument(callerOf(ctx).userId, p.document_id))) throw notFound(p.document_id);
        ctx.status = 204;
      },
    });
}

/** An upload within the person's limits: count and bytes per hour (the declared length, before reading), uploads at once. */
const uploadLimits: Middleware = async (ctx: Context, next) => {
  const { userId } = callerOf(ctx);
  await takeLimit('uploads', userId);
  const declared = Number(ctx.get('Content-Length'));
  if (declared > 0) await takeLimit('uploadBytes', userId, declared);
  const release = await holdSlot('uploadsInProgress', userId);
  try {
    await next();
  } finally {
    await release();
  }
};
