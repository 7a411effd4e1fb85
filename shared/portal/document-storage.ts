/**
 * Where document content lives: one small interface, with Postgres as the default backend (every
 * API and worker process sees the content, and it is backed up with the database).
 */
import type { Knex } from 'knex';
import { db } from '../db/index.js';

export interface DocumentStorage {
  put(documentId: string, content: Buffer, k?: Knex): Promise<void>;
  get(documentId: string): Promise<Buffer | undefined>;
  /** Deleting the document row removes its content too; this is for backends outside the database. */
  remove(documentId: string): Promise<void>;
}

const TABLE = 'document_contents';

export const postgresStorage: DocumentStorage = {
  async put(documentId, content, k = db()) {
    await k(TABLE).insert({ document_id: documentId, content }).onConflict('document_id').merge();
  },
  async get(documentId) {
    const row = (await db()(TABLE).select('content').where({ document_id: documentId }).first()) as { content: Buffer } | undefined;
    return row?.content;
  },
  async remove(documentId) {
    await db()(TABLE).where({ document_id: documentId }).delete();
  },
};

/** The storage in use. */
export const documentStorage = (): DocumentStorage => postgresStorage;
