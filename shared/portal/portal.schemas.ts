/**
 * The portal's records as zod schemas (spec 002 § Portal data resources), their types inferred: what
 * stores, tools, the job and the routes' responses share. Request schemas only routes use live beside
 * their routes (api/portal/<resource>.schemas.ts).
 */
import { z } from '../zod.js';

export const e164 = z.string().regex(/^\+[1-9][0-9]{1,14}$/, 'must be an E.164 phone number such as +14155550100');

const timezones = new Set(Intl.supportedValuesOf('timeZone'));
/** An IANA time zone name; `UTC` is accepted though some runtimes leave it out of supportedValuesOf. */
export const timezoneSchema = z
  .string()
  .refine((v) => v === 'UTC' || timezones.has(v), 'must be an IANA time zone name such as Europe/Paris')
  .openapi({ example: 'Europe/Paris' });

export const contactSchema = z
  .object({
    contact_id: z.string(),
    name: z.string(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    company: z.string().nullable(),
    tags: z.array(z.string()),
    favorite: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Contact');
export type Contact = z.output<typeof contactSchema>;

export const ragStatuses = ['pending', 'processing', 'indexed', 'failed'] as const;
export type RagStatus = (typeof ragStatuses)[number];
export const documentSchema = z
  .object({
    document_id: z.string(),
    filename: z.string(),
    category: z.string().nullable(),
    tags: z.array(z.string()),
    rag_status: z.enum(ragStatuses),
    failure_reason: z.string().nullable().openapi({ description: 'why indexing failed (rag_status failed), else null' }),
    size: z.number().int(),
    content_type: z.string(),
    checksum: z.string().openapi({ description: 'SHA-256 of the content, hex' }),
    uploaded_at: z.string(),
    indexed_at: z.string().nullable(),
  })
  .openapi('Document');
export type Document = z.output<typeof documentSchema>;

export const searchHitSchema = z
  .object({
    document_id: z.string(),
    filename: z.string(),
    chunk: z.number().int().openapi({ description: 'ordinal of the matching chunk in its document' }),
    rank: z.number(),
    snippet: z.string().openapi({ description: 'the matching passage, matches wrapped in ** **' }),
  })
  .openapi('DocumentSearchHit');
export type SearchHit = z.output<typeof searchHitSchema>;

export const caseStatuses = ['open', 'in_progress', 'waiting', 'resolved', 'closed'] as const;
export type CaseStatus = (typeof caseStatuses)[number];
export const casePriorities = ['P1', 'P2', 'P3', 'P4'] as const;

export const caseSchema = z
  .object({
    case_id: z.string(),
    title: z.string(),
    description: z.string(),
    status: z.enum(caseStatuses),
    priority: z.enum(casePriorities),
    requester_id: z.string(),
    requester_name: z.string().nullable(),
    assignee_id: z.string().nullable(),
    assignee_name: z.string().nullable(),
    comment_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    resolved_at: z.string().nullable(),
    closed_at: z.string().nullable(),
  })
  .openapi('PortalCase');
export type PortalCase = z.output<typeof caseSchema>;

export const commentSchema = z
  .object({ comment_id: z.string(), case_id: z.string(), author_id: z.string(), author_name: z.string().nullable(), body: z.string(), created_at: z.string() })
  .openapi('PortalCaseComment');
export type CaseComment = z.output<typeof commentSchema>;
