/**
 * Portal documents: streamed upload with the size limit, indexing for retrieval (the
 * portal.index-document job), re-index and search.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { config } from '../config.js';
import { db } from '../db/index.js';
import { enqueue } from '../queues.js';
import { logger } from '../logger.js';
import { NotFoundError, PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../errors.js';
import { documentStorage } from './document-storage.js';
import { findDocument, insertDocument, setRagStatus, type StoredDocument } from './documents.store.js';
import { replaceChunks, searchChunks } from './document-chunks.store.js';
import { ExtractionError, documentKind, extractChunks, supportedKinds } from './extract.js';
import type { SearchHit } from './schemas.js';

interface Upload {
  filename: string;
  contentType: string;
  content: Buffer;
  fields: Record<string, string[]>;
}

/**
 * Reads a multipart/form-data request with one `file` part (and optional `category`, `tags` fields),
 * counting bytes as they arrive: past DOCUMENT_MAX_BYTES it stops reading and throws PayloadTooLarge.
 */
export function readUpload(req: IncomingMessage, contentType: string | undefined): Promise<Upload> {
  const max = config().portal.documentMaxBytes;
  if (!contentType?.toLowerCase().startsWith('multipart/form-data')) {
    return Promise.reject(new UnsupportedMediaTypeError('Upload the document as multipart/form-data with a `file` part.'));
  }
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: max, fields: 20, fieldSize: 10_000 } });
    } catch (err) {
      reject(new ValidationError(`The multipart body cannot be read: ${(err as Error).message}`));
      return;
    }
    const fields: Record<string, string[]> = {};
    let file: Omit<Upload, 'fields'> | undefined;
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      req.unpipe(parser);
      // Drain the rest so the connection can carry the error response.
      req.resume();
      reject(err);
    };
    parser.on('field', (name, value) => (fields[name] ??= []).push(value));
    parser.on('file', (name, stream, info) => {
      if (name !== 'file') {
        stream.resume();
        return;
      }
      const parts: Buffer[] = [];
      stream.on('data', (d: Buffer) => parts.push(d));
      stream.on('limit', () => fail(new PayloadTooLargeError(`The document is larger than ${max} bytes (DOCUMENT_MAX_BYTES).`)));
      stream.on('end', () => {
        if (!failed) file = { filename: info.filename || 'document', contentType: info.mimeType || 'application/octet-stream', content: Buffer.concat(parts) };
      });
    });
    parser.on('error', (err: Error) => fail(new ValidationError(`The multipart body cannot be read: ${err.message}`)));
    parser.on('close', () => {
      if (failed) return;
      if (!file) fail(new ValidationError('A `file` part is required.', [{ path: 'body.file', message: 'is required' }]));
      else resolve({ ...file, fields });
    });
    req.pipe(parser);
  });
}

const tagsOf = (values: string[] = []) => [...new Set(values.flatMap((v) => v.split(',')).map((t) => t.trim()).filter(Boolean))];

/** Stores an upload (metadata and content in one transaction) and queues its indexing. */
export async function storeUpload(ownerId: string, upload: Upload): Promise<StoredDocument> {
  const filename = upload.filename.slice(0, 255);
  if (!documentKind(upload.contentType, filename)) {
    throw new UnsupportedMediaTypeError(`Unsupported file type ${upload.contentType} (${filename}); supported: ${supportedKinds}.`);
  }
  const category = upload.fields.category?.[0]?.trim() || null;
  const tags = tagsOf(upload.fields.tags);
  const errors = [
    ...(category && category.length > 100 ? [{ path: 'body.category', message: 'at most 100 characters' }] : []),
    ...(tags.some((t) => t.length > 50) ? [{ path: 'body.tags', message: 'each tag at most 50 characters' }] : []),
  ];
  if (errors.length) throw new ValidationError('The upload is invalid.', errors);
  const documentId = randomUUID();
  const doc = await db().transaction(async (trx) => {
    const stored = await insertDocument(
      {
        document_id: documentId,
        owner_id: ownerId,
        filename,
        category,
        tags,
        size: upload.content.length,
        content_type: upload.contentType,
        checksum: createHash('sha256').update(upload.content).digest('hex'),
      },
      trx,
    );
    await documentStorage().put(documentId, upload.content, trx);
    return stored;
  });
  await enqueue('portal.index-document', { document_id: documentId, request_id: randomUUID() });
  return doc;
}

/** Queues a fresh indexing of an owner's document (its status goes back to pending). */
export async function reindexDocument(ownerId: string, documentId: string): Promise<StoredDocument> {
  if (!(await findDocument(documentId, ownerId))) throw new NotFoundError(`No document ${documentId}.`);
  await setRagStatus(documentId, 'pending');
  await enqueue('portal.index-document', { document_id: documentId, request_id: randomUUID() });
  return (await findDocument(documentId, ownerId))!;
}

/**
 * The indexing job: processing, then the text extracted and chunked in a process of its own (within
 * DOCUMENT_EXTRACT_TIMEOUT_MS and DOCUMENT_EXTRACT_MAX_MEMORY_MB) and stored (replacing earlier
 * chunks) with indexed in one transaction, or failed with the reason when the file cannot be read
 * within those limits.
 * A deleted document is skipped. Database errors propagate so the job retries.
 */
export async function indexDocument(documentId: string): Promise<{ outcome: 'indexed' | 'failed' | 'skipped'; chunks?: number; reason?: string }> {
  const doc = await findDocument(documentId);
  if (!doc) return { outcome: 'skipped' };
  await setRagStatus(documentId, 'processing');
  const content = await documentStorage().get(documentId);
  if (!content) return { outcome: 'skipped' };
  let chunks: string[];
  try {
    const { extractTimeoutMs, extractMaxMemoryMb } = config().portal;
    chunks = await extractChunks(content, doc.content_type, doc.filename, { timeoutMs: extractTimeoutMs, maxMemoryMb: extractMaxMemoryMb });
    if (!chunks.length) throw new ExtractionError('No text was found in the document (a scanned PDF needs text recognition first).');
  } catch (err) {
    if (!(err instanceof ExtractionError)) throw err;
    await db().transaction(async (trx) => {
      await replaceChunks(trx, documentId, doc.owner_id, []);
      await setRagStatus(documentId, 'failed', { failure_reason: err.message, k: trx });
    });
    logger('portal').info({ document_id: documentId, reason: err.message }, 'document indexing failed');
    return { outcome: 'failed', reason: err.message };
  }
  await db().transaction(async (trx) => {
    await replaceChunks(trx, documentId, doc.owner_id, chunks);
    await setRagStatus(documentId, 'indexed', { k: trx });
  });
  return { outcome: 'indexed', chunks: chunks.length };
}

/** Ranked hits over a person's indexed documents. */
export function searchDocuments(ownerId: string, query: string, limit = 10): Promise<SearchHit[]> {
  return searchChunks(ownerId, query, limit);
}
