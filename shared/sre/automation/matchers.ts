/**
 * Alert matchers of incident rules and runbooks, in Alertmanager's four operators. Matching runs in
 * Postgres (one SQL predicate) so a whole payload's alerts are matched against every rule in one statement.
 */
import { RE2JS } from 're2js';
import { db } from '../../db/index.js';
import { ValidationError } from '../../errors.js';
import { z } from '../../zod.js';

/** Longest matcher value; a regular expression longer than this is not a label pattern. */
export const maxMatcherValueLength = 1000;

/**
 * Why `pattern` is not an Alertmanager regular expression, or undefined when it is. Alertmanager uses
 * RE2 (linear time: no back-references, no look-around); checking with an RE2 engine at write time keeps
 * patterns that backtrack exponentially (`(.*)\1`) away from the matching in Postgres.
 */
export function re2Problem(pattern: string): string | undefined {
  try {
    RE2JS.compile(`^(?:${pattern})$`);
    return undefined;
  } catch (err) {
    return `is not an RE2 regular expression (Alertmanager syntax: no back-references or look-around): ${(err as Error).message}`;
  }
}

export const matcherSchema = z
  .object({
    label: z.string().min(1).max(200),
    op: z.enum(['=', '!=', '=~', '!~']).default('='),
    value: z.string().max(maxMatcherValueLength),
  })
  .superRefine((m, ctx) => {
    if (m.op !== '=~' && m.op !== '!~') return;
    const problem = re2Problem(m.value);
    if (problem) ctx.addIssue({ code: 'custom', path: ['value'], message: problem });
  })
  .openapi('AlertMatcher', {
    description: `Alertmanager-style matcher; regular expressions use RE2 syntax (no back-references or look-around), are anchored (^(value)$) and at most ${maxMatcherValueLength} characters; a missing label matches ""`,
  });
export type Matcher = z.output<typeof matcherSchema>;

/**
 * SQL predicate: does the labels jsonb `labels` satisfy matchers jsonb `matchers` and the severities text[] `severities`?
 * Arguments are SQL expressions (column references), never user input.
 */
export function matchPredicate(matchers: string, severities: string, labels: string): string {
  const value = `coalesce(${labels}->>m.label, '')`;
  return `(cardinality(${severities}) = 0 or coalesce(${labels}->>'severity', '') = any(${severities}))
    and not exists (
      select 1 from jsonb_to_recordset(${matchers}) as m(label text, op text, value text)
      where not case m.op
        when '=' then ${value} = m.value
        when '!=' then ${value} <> m.value
        when '=~' then ${value} ~ ('^(' || m.value || ')$')
        else ${value} !~ ('^(' || m.value || ')$')
      end)`;
}

/** Rejects regular expressions Postgres cannot compile, naming the matcher (400 instead of a failing worker later). */
export async function assertMatchersCompile(matchers: Matcher[], path = 'body.matchers'): Promise<void> {
  const errors = [];
  for (const [i, m] of matchers.entries()) {
    if (m.op !== '=~' && m.op !== '!~') continue;
    try {
      await db().raw(`select '' ~ ?`, [`^(${m.value})$`]);
    } catch {
      errors.push({ path: `${path}.${i}.value`, message: 'is not a valid regular expression' });
    }
  }
  if (errors.length) throw new ValidationError('A matcher is not a valid regular expression.', errors);
}
