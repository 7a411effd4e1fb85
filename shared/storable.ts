/**
 * Input PostgreSQL cannot store, found before anything is queued. Text and jsonb refuse U+0000
 * (22021 / 22P05) and strings that are not well-formed UTF-16 (a lone surrogate has no UTF-8
 * encoding); a value nested deeper than MAX_JSON_DEPTH is refused too, before anything recursive
 * (zod, JSON.stringify when a job is queued, jsonb) walks it. Every route's input goes through
 * `unstorableFields` (api/routing.ts), so such input is a 400 naming the field, never accepted and
 * then dropped by a worker.
 */
import type { FieldError } from './errors.js';

/** A NUL or a lone surrogate: in unicode mode a well-formed surrogate pair is one code point outside the range. */
const unstorableChar = /[\u0000\ud800-\udfff]/u;
/**
 * Whether the raw text of a body may parse into an unstorable string: such a character itself, a
 * JSON escape of a NUL or of any surrogate (paired ones included, so a false alarm costs one walk),
 * or a percent-encoded NUL (form bodies; a percent-encoded lone surrogate does not decode).
 */
const mayHoldUnstorable = /[\u0000\ud800-\udfff]|\\u(0000|d[89a-f])|%00/iu;

/** At most this many problems are named: enough to fix a body, bounded for a hostile one. */
const maxReported = 20;

const charProblem = (s: string) => (s.includes('\u0000') ? 'must not contain a NUL character (U+0000)' : 'must not contain a lone UTF-16 surrogate (not valid Unicode)');

/** Whether a raw body's text is free of anything `unstorableFields` refuses other than nesting (a scan of the text, no walk). */
export function rawTextStorable(raw: unknown): boolean {
  return typeof raw === 'string' && !mayHoldUnstorable.test(raw);
}

/**
 * Whether JSON text nests objects and arrays deeper than `maxDepth`: one pass over the characters,
 * skipping string contents, without recursion. Text that is not JSON may say yes wrongly; the walk
 * of the parsed value (unstorableFields) decides.
 */
export function jsonNestsDeeper(raw: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * Field errors of a parsed value (a request's body, query, params or headers) that PostgreSQL could
 * not store: strings and object keys holding NUL or a lone surrogate, and objects or arrays nested
 * deeper than `maxDepth` (the outermost one is level 1; nothing below the limit is walked). Paths are
 * dotted and start with `location`; empty when the value is storable.
 */
export function unstorableFields(value: unknown, location: string, maxDepth: number): FieldError[] {
  const errors: FieldError[] = [];
  const path: string[] = [location];
  const report = (message: string) => errors.push({ path: path.join('.'), message });
  const walk = (v: unknown, depth: number): void => {
    if (errors.length >= maxReported) return;
    if (typeof v === 'string') {
      if (unstorableChar.test(v)) report(charProblem(v));
      return;
    }
    if (!v || typeof v !== 'object') return;
    if (depth > maxDepth) {
      report(`nests objects and arrays deeper than ${maxDepth} levels (MAX_JSON_DEPTH)`);
      return;
    }
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      path.push(k);
      if (unstorableChar.test(k) && errors.length < maxReported) report(`the key ${charProblem(k)}`);
      walk((v as Record<string, unknown>)[k], depth + 1);
      path.pop();
    }
  };
  walk(value, 1);
  return errors;
}
