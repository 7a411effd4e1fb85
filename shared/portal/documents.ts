/**
 * Portal documents: storing an upload (read and size-limited by the API's multipart middleware),
 * indexing for retrieval (the portal.index-document job), re-index and search.
 */
import { createHash, randomUUID } from 'node:crypto';
import { config } from '../config.js';
import { db } from '../db/index.js';
import { enqueue } from '../queues.js';
import { logger } from '../logger.js';
import { takeLimit } from '../limits.js';
import { NotFoundError, UnsupportedMediaTypeError } from '../errors.js';
import { documentStorage } from './document-storage.js';
import { findDocument, getDocument, insertDocument, setRagStatus, type StoredDocument } from './documents.store.js';
import { replaceChunks, searchChunks } from './document-chunks.store.js';
import { ExtractionError, documentKind, extractChunks, supportedKinds } from './extract.js';
import type { SearchHit } from './portal.schemas.js';

/** A file to store as a document, with the category and tags it was filed under. */
export interface DocumentUpload {
  file: { filename: string; contentType: string; content: Buffer };
  category: string | null;
  tags: string[];
}

/** Stores an upload (metadata and content in one transaction) and queues its indexing. */
export async function storeUpload(ownerId: string, upload: DocumentUpload): Promise<StoredDocument> {
  const { file } = upload;
  const filename = (file.filename || 'document').slice(0, 255);
  if (!documentKind(file.contentType, filename)) {
    throw new UnsupportedMediaTypeError(`Unsupported file type ${file.contentType} (${filename}); supported: ${supportedKinds}.`);
  }
  const tags = [...new Set(upload.tags.map((t) => t.trim()).filter(Boolean))];
  const documentId = randomUUID();
  const doc = await db().transaction(async (trx) => {
    const stored = await insertDocument(
      {
        document_id: documentId,
        owner_id: ownerId,
        filename,
        category: upload.category,
        tags,
        size: file.content.length,
        content_type: file.contentType,
        checksum: createHash('sha256').update(file.content).digest('hex'),
      },
      trx,
    );
    await documentStorage().put(documentId, file.content, trx);
    return stored;
  });
  await enqueue('portal.index-document', { document_id: documentId, request_id: randomUUID() });
  return doc;
}

/** Queues a fresh indexing of an owner's document (its status goes back to pending). */
export async function reindexDocument(ownerId: string, documentId: string): Promise<StoredDocument> {
  const doc = await findDocument(ownerId, documentId);
  if (!doc) throw new NotFoundError(`No document ${documentId}.`);
  // A reindex parses the file again as an upload does: it counts as one (else one stored bomb is re-run without end).
  await takeLimit('uploads', ownerId);
  await takeLimit('uploadBytes', ownerId, doc.size);
  await setRagStatus(documentId, 'pending');
  await enqueue('portal.index-document', { document_id: documentId, request_id: randomUUID() });
  return (await findDocument(ownerId, documentId))!;
}

/**
 * The indexing job: processing, then the text extracted and chunked in a process of its own (within
 * DOCUMENT_EXTRACT_TIMEOUT_MS and DOCUMENT_EXTRACT_MAX_MEMORY_MB) and stored (replacing earlier
 * chunks) with indexed in one transaction, or failed with the reason when the file cannot be read
 * within those limits.
 * A deleted document is skipped. Database errors propagate so the job retries.
 */
export async function indexDocument(documentId: string): Promise<{ outcome: 'indexed' | 'failed' | 'skipped'; chunks?: number; reason?: string }> {
  const doc = await getDocument(documentId);
  if (!doc) return { outcome: 'skipped' };
  await setRagStatus(documentId, 'processing');
  const content = await documentStorage().get(documentId);
  if (!content) return { outcome: 'skipped' };
  let chunks: string[];
  try {
    const { extractTimeoutMs, extractMaxMemoryMb, extractMaxAddressSpaceMb } = config().portal;
    chunks = await extractChunks(content, doc.content_type, doc.filename, { timeoutMs: extractTimeoutMs, maxMemoryMb: extractMaxMemoryMb, maxAddressSpaceMb: extractMaxAddressSpaceMb });
    if (!chunks.length) throw new ExtractionError('No text was found in the document (a scanned PDF needs text recognition first).');
  } catch (err) {
    if (!(err instanceof ExtractionError)) throw err;
    await db().transaction(async (trx) => {
      await replaceChunks(doc.owner_id, documentId, [], trx);
      await setRagStatus(documentId, 'failed', { failure_reason: err.message, k: trx });
    });
    logger('portal').info({ document_id: documentId, reason: err.message }, 'document indexing failed');
    return { outcome: 'failed', reason: err.message };
  }
  await db().transaction(async (trx) => {
    await replaceChunks(doc.owner_id, documentId, chunks, trx);
    await setRagStatus(documentId, 'indexed', { k: trx });
  });
  return { outcome: 'indexed', chunks: chunks.length };
}

/** Ranked hits over a person's indexed documents. */
export function searchDocuments(ownerId: string, query: string, limit = 10): Promise<SearchHit[]> {
  return searchChunks(ownerId, query, limit);
}
