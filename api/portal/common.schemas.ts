/** Schemas every portal route shares: the acting-user header and the list routes' query parameter shapes. */
import { z, uuid } from '../../shared/zod.js';

/** The header API-key callers name the acting user in (documented on every portal route). */
export const userHeader = z.object({ 'x-user-id': uuid().optional().openapi({ description: 'API-key callers: the user to act for' }) });

/** A list parameter: comma-separated or repeated (`?tags=a,b` or `?tags=a&tags=b`), checked by `s`. */
export const list = <S extends z.ZodType<unknown, string[] | undefined>>(s: S) =>
  z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((v) => (v === undefined ? undefined : [v].flat().flatMap((x) => x.split(',')).map((x) => x.trim()).filter(Boolean)))
    .pipe(s);
/** A boolean parameter: `true` or `false`. */
export const flag = z.enum(['true', 'false']).optional().transform((v) => (v === undefined ? undefined : v === 'true'));
