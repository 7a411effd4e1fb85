/** Query module of `documents`: document metadata and indexing state. Owner-scoped except for the indexing job. */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import type { Document, RagStatus } from './portal.schemas.js';

const TABLE = 'documents';
const COLUMNS = ['document_id', 'owner_id', 'filename', 'category', 'tags', 'rag_status', 'failure_reason', 'size', 'content_type', 'checksum', 'uploaded_at', 'indexed_at'];

interface DocumentRow extends Omit<Document, 'uploaded_at' | 'indexed_at' | 'size'> {
  owner_id: string;
  size: string | number;
  uploaded_at: Date;
  indexed_at: Date | null;
}

export type StoredDocument = Document & { owner_id: string };

const toDomain = (r: DocumentRow): StoredDocument => ({
  ...r,
  size: Number(r.size),
  uploaded_at: r.uploaded_at.toISOString(),
  indexed_at: r.indexed_at?.toISOString() ?? null,
});

export interface DocumentFilters {
  category?: string;
  tags?: string[];
  rag_status?: RagStatus;
}

export async function listDocuments(ownerId: string, f: DocumentFilters): Promise<StoredDocument[]> {
  const q = db()(TABLE).select(COLUMNS).where({ owner_id: ownerId });
  if (f.category) q.where({ category: f.category });
  if (f.rag_status) q.where({ rag_status: f.rag_status });
  if (f.tags?.length) q.whereRaw('tags @> ?::text[]', [f.tags]);
  return ((await q.orderBy([{ column: 'uploaded_at', order: 'desc' }, { column: 'document_id' }]).limit(1000)) as DocumentRow[]).map(toDomain);
}

/** A document of its owner. */
export function findDocument(ownerId: string, documentId: string): Promise<StoredDocument | undefined> {
  return documentWhere({ document_id: documentId, owner_id: ownerId });
}

/** A document whoever owns it (the indexing job). */
export function getDocument(documentId: string): Promise<StoredDocument | undefined> {
  return documentWhere({ document_id: documentId });
}

async function documentWhere(where: { document_id: string; owner_id?: string }): Promise<StoredDocument | undefined> {
  const row = (await db()(TABLE).select(COLUMNS).where(where).first()) as DocumentRow | undefined;
  return row && toDomain(row);
}

export interface NewDocument {
  document_id: string;
  owner_id: string;
  filename: string;
  category: string | null;
  tags: string[];
  size: number;
  content_type: string;
  checksum: string;
}

export async function insertDocument(doc: NewDocument, k: Knex = db()): Promise<StoredDocument> {
  const [row] = (await k(TABLE).insert(doc).returning(COLUMNS)) as DocumentRow[];
  return toDomain(row!);
}

export async function updateDocumentMeta(ownerId: string, documentId: string, change: { filename?: string; category?: string | null; tags?: string[] }): Promise<StoredDocument | undefined> {
  if (!Object.keys(change).length) return findDocument(ownerId, documentId);
  const [row] = (await db()(TABLE).where({ owner_id: ownerId, document_id: documentId }).update(change).returning(COLUMNS)) as DocumentRow[];
  return row && toDomain(row);
}

/** Sets the indexing state (failure_reason only with failed; indexed_at when indexed); false for an unknown document. */
export async function setRagStatus(documentId: string, to: RagStatus, opts: { failure_reason?: string | null; k?: Knex } = {}): Promise<boolean> {
  const k = opts.k ?? db();
  const q = k(TABLE)
    .where({ document_id: documentId })
    .update({ rag_status: to, failure_reason: to === 'failed' ? (opts.failure_reason ?? 'unknown') : null, ...(to === 'indexed' ? { indexed_at: k.fn.now() } : {}) });
  return (await q) > 0;
}

export async function deleteDocument(ownerId: string, documentId: string): Promise<boolean> {
  return (await db()(TABLE).where({ owner_id: ownerId, document_id: documentId }).delete()) > 0;
}
