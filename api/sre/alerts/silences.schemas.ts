/** Request and response schemas of the silence routes. */
import { z } from '../../../shared/zod.js';
import { offsetPageQuery, offsetPageSchema } from '../../../shared/sre/listing.js';
import { matcherSchema } from '../../../shared/sre/automation/matchers.js';
import { ts, csv } from '../common.schemas.js';

const silenceState = z.enum(['pending', 'active', 'expired']);
export const silence = z
  .object({
    id: z.string(),
    matchers: z.array(matcherSchema),
    starts_at: ts,
    ends_at: ts,
    created_by: z.string(),
    comment: z.string(),
    ended_by: z.string().nullable().openapi({ description: 'who ended it early, if anyone' }),
    state: silenceState,
    created_at: ts,
    updated_at: ts,
  })
  .openapi('Silence');
export const silenceDetail = silence.extend({ silenced_alerts: z.number().int().openapi({ description: 'alerts (not resolved) it silences now' }) }).openapi('SilenceDetail');
export const silenceCreate = z.object({
  matchers: z.array(matcherSchema).min(1, 'needs at least one matcher').max(50),
  starts_at: z.iso.datetime({ offset: true }).optional().openapi({ description: 'default: now' }),
  ends_at: z.iso.datetime({ offset: true }),
  created_by: z.string().trim().min(1, 'is required').max(200),
  comment: z.string().trim().min(1, 'is required').max(2000),
});
export const silenceQuery = z.object({ ...offsetPageQuery, state: csv(['pending', 'active', 'expired']) });
export const silencePage = offsetPageSchema(silence, 'SilencePage');
export const endSilenceBody = z.object({ by: z.string().min(1).max(200).default('api') });
