/** portal.index-document: extracts and indexes one document; safe to run twice (its chunks are replaced). */
import type { JobHandler } from '../runner.js';
import { indexDocument } from '../../shared/portal/documents.js';

export const indexDocumentJob: JobHandler<'portal.index-document'> = (payload) => indexDocument(payload.document_id);
