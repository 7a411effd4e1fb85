/** Request and response schemas of the document routes (the document itself: shared/portal/portal.schemas.ts). */
import { z, uuid } from '../../shared/zod.js';
import { config } from '../../shared/config.js';
import { documentSchema, ragStatuses, searchHitSchema } from '../../shared/portal/portal.schemas.js';
import { list } from './common.schemas.js';

export const documentParams = z.object({ document_id: uuid() });
export const documentQuery = z.object({ category: z.string().max(100).optional(), tags: list(z.array(z.string().max(50)).max(20).optional()), rag_status: z.enum(ragStatuses).optional() });
export const documentSearchQuery = z.object({ q: z.string().trim().min(1).max(500), limit: z.coerce.number().int().min(1).max(50).default(10) });
export const documentList = z.object({ documents: z.array(documentSchema) });
export const searchHits = z.object({ hits: z.array(searchHitSchema) });
/** GET …/{document_id}/content: the file as uploaded. */
export const documentContent = z.string().openapi({ format: 'binary' });
export const documentUpdate = z.object({ filename: z.string().trim().min(1).max(255), category: z.string().max(100).nullable(), tags: z.array(z.string().trim().min(1).max(50)).max(30) }).partial().strict();

/** POST /api/portal/documents: a multipart body with a `file` part and the text fields `category` and `tags` (comma-separated). */
export const documentUpload = {
  file: 'file',
  maxBytes: () => config().portal.documentMaxBytes,
  tooLarge: (max: number) => `The document is larger than ${max} bytes (DOCUMENT_MAX_BYTES).`,
  fields: z.object({
    category: z
      .string()
      .trim()
      .max(100, 'at most 100 characters')
      .optional()
      .transform((v) => v || undefined)
      .openapi({ description: 'a category of your choosing, e.g. invoices' }),
    tags: list(
      z
        .array(z.string())
        .refine((tags) => tags.every((t) => t.length <= 50), 'each tag at most 50 characters')
        .optional(),
    ).openapi({ type: 'string', description: 'comma-separated tags' }),
  }),
};
