/** Silences: validation of a new silence (matchers, time range) and ending one early. */
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import { assertMatchersCompile, type Matcher } from '../automation/matchers.js';
import { endSilence as endRow, findSilence, insertSilence, matchesEverything, type Silence } from './silence.store.js';

export interface SilenceInput {
  matchers: Matcher[];
  starts_at?: string;
  ends_at: string;
  created_by: string;
  comment: string;
}

/**
 * Creates a silence. As in Alertmanager: regexes are anchored, a missing label matches "", the end
 * lies after the start and in the future, and the matchers must not match every alert.
 */
export async function createSilence(input: SilenceInput): Promise<Silence> {
  await assertMatchersCompile(input.matchers);
  const startsAt = input.starts_at ? new Date(input.starts_at) : new Date();
  const endsAt = new Date(input.ends_at);
  const errors = [];
  if (endsAt <= startsAt) errors.push({ path: 'body.ends_at', message: 'must be after starts_at' });
  else if (endsAt <= new Date()) errors.push({ path: 'body.ends_at', message: 'must be in the future' });
  if (await matchesEverything(input.matchers)) errors.push({ path: 'body.matchers', message: 'must not match every alert (at least one matcher must not match an empty value)' });
  if (errors.length) throw new ValidationError('The silence is invalid.', errors);
  return insertSilence({ ...input, starts_at: startsAt.toISOString(), ends_at: endsAt.toISOString() });
}

export async function getSilence(id: string): Promise<Silence> {
  const silence = await findSilence(id);
  if (!silence) throw new NotFoundError(`No silence ${id}.`);
  return silence;
}

/** Ends a silence early; 409 when it has already expired. */
export async function expireSilence(id: string, by: string): Promise<Silence> {
  if (!(await endRow(id, by))) {
    await getSilence(id);
    throw new ConflictError('The silence has already expired.', [], { state: 'expired' });
  }
  return getSilence(id);
}
