/** Request and response schemas of the contact routes (the contact itself: shared/portal/portal.schemas.ts). */
import { z, uuid } from '../../shared/zod.js';
import { contactSchema, e164 } from '../../shared/portal/portal.schemas.js';
import { flag, list } from './common.schemas.js';

export const contactParams = z.object({ contact_id: uuid() });
const tag = z.string().trim().min(1).max(50);
export const contactInput = z
  .object({
    name: z.string().trim().min(1, 'is required').max(200),
    email: z.email().max(320).nullable().optional(),
    phone: e164.nullable().optional(),
    company: z.string().max(200).nullable().optional(),
    tags: z.array(tag).max(30).default([]),
    favorite: z.boolean().default(false),
  })
  .strict();
export const contactUpdate = contactInput.partial().strict();
export const contactQuery = z.object({ search: z.string().max(200).optional(), tags: list(z.array(z.string().max(50)).max(20).optional()), favorite: flag });
export const contactList = z.object({ contacts: z.array(contactSchema) });
