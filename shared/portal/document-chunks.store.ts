/** Query module of `document_chunks`: extracted text in chunks, with the full-text index the search ranks. */
import type { Knex } from 'knex';
import { db } from '../db/index.js';
import type { SearchHit } from './portal.schemas.js';

const TABLE = 'document_chunks';

/** Replaces a document's chunks (re-indexing starts from nothing). */
export async function replaceChunks(ownerId: string, documentId: string, chunks: string[], k: Knex = db()): Promise<void> {
  await k(TABLE).where({ document_id: documentId }).delete();
  for (let i = 0; i < chunks.length; i += 500) {
    await k(TABLE).insert(chunks.slice(i, i + 500).map((content, j) => ({ document_id: documentId, owner_id: ownerId, ordinal: i + j, content })));
  }
}

/**
 * Ranked hits of a query over one person's indexed documents: websearch syntax ("quoted phrases",
 * -exclusions, or), ts_rank for the order and ts_headline for the snippet (computed for the top hits only).
 */
export async function searchChunks(ownerId: string, query: string, limit = 10): Promise<SearchHit[]> {
  const { rows } = await db().raw(
    `with q as (select websearch_to_tsquery('english', ?) as q),
     top as (
       select c.document_id, c.ordinal, c.content, ts_rank(c.tsv, q.q) as rank
       from document_chunks c, q
       where c.owner_id = ? and c.tsv @@ q.q
       order by rank desc, c.chunk_id
       limit ?
     )
     select top.document_id, d.filename, top.ordinal as chunk, top.rank,
            ts_headline('english', top.content, q.q, 'StartSel=**, StopSel=**, MaxWords=35, MinWords=12, MaxFragments=2') as snippet
     from top join documents d on d.document_id = top.document_id, q
     where d.rag_status = 'indexed'
     order by top.rank desc`,
    [query, ownerId, limit],
  );
  return (rows as Array<SearchHit & { rank: string | number }>).map((r) => ({ ...r, rank: Number(r.rank) }));
}
