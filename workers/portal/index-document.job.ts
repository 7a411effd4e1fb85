/**
 * portal.index-document: extracts and indexes one document; safe to run twice (its chunks are replaced).
 * A document that cannot be read (within the extraction limits) is marked failed with its reason and
 * its job fails for good: running it again would fail the same way.
 */
import { UnrecoverableError } from 'bullmq';
import type { JobHandler } from '../runner.js';
import { indexDocument } from '../../shared/portal/documents.js';

export const indexDocumentJob: JobHandler<'portal.index-document'> = async (payload) => {
  const result = await indexDocument(payload.document_id);
  if (result.outcome === 'failed') throw new UnrecoverableError(result.reason);
  return result;
};
