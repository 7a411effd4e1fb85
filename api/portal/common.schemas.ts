/** Query parameter shapes the portal's list routes share. */
import { z } from '../../shared/zod.js';

/** A list parameter: comma-separated or repeated (`?tags=a,b` or `?tags=a&tags=b`), checked by `s`. */
export const list = <S extends z.ZodType<unknown, string[] | undefined>>(s: S) =>
  z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((v) => (v === undefined ? undefined : [v].flat().flatMap((x) => x.split(',')).map((x) => x.trim()).filter(Boolean)))
    .pipe(s);
/** A boolean parameter: `true` or `false`. */
export const flag = z.enum(['true', 'false']).optional().transform((v) => (v === undefined ? undefined : v === 'true'));
