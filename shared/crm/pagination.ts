/**
 * Keyset (cursor) pagination shared by the CRM lists.
 *
 * A cursor is base64url(JSON `{"s": sort, "k": last sort key as Postgres text, "id": last row id}`):
 * opaque to clients, but it carries the sort it was made for, so a cursor reused with another
 * `sort` is refused (400) instead of silently skipping rows. Rows are ordered by the sort key and
 * then by id, and the next page starts strictly after (key, id), so inserts between pages never
 * duplicate or skip rows that existed before.
 */
import type { Knex } from 'knex';
import { z } from '../zod.js';
import { ValidationError } from '../errors.js';

/** A sortable field: a non-null SQL expression and its Postgres type (for casting the cursor key back). */
export interface SortField {
  sql: string;
  type: 'timestamptz' | 'text' | 'numeric' | 'date' | 'integer';
}

export interface KeysetPageRequest {
  limit: number;
  cursor?: string;
  /** Field name, "-" prefixed for descending. */
  sort: string;
}

export interface KeysetPage<T> {
  items: T[];
  next_cursor: string | null;
}

/** Query parameters of every paginated list (sort values listed per resource). */
export function keysetPageQuery(sortable: string[], defaultSort: string) {
  const sorts = sortable.flatMap((f) => [f, `-${f}`]) as [string, ...string[]];
  return {
    limit: z.coerce.number().int().min(1).max(100).default(25).openapi({ description: 'Page size, 1 to 100 (default 25)' }),
    cursor: z.string().max(1000).optional().openapi({ description: '`next_cursor` of the previous page (opaque; only valid with the same `sort`)' }),
    sort: z.enum(sorts).default(defaultSort).openapi({ description: `Sort field, \`-\` prefix for descending; default \`${defaultSort}\`` }),
  };
}

const cursorShape = z.object({ s: z.string(), k: z.string(), id: z.string().uuid() });

function decodeCursor(cursor: string, sort: string): z.infer<typeof cursorShape> {
  try {
    const parsed = cursorShape.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    if (parsed.s !== sort) throw new Error('sort mismatch');
    return parsed;
  } catch {
    throw new ValidationError('The cursor is not valid for this list and sort.', [{ path: 'query.cursor', message: 'is not a cursor of this list with this sort' }]);
  }
}

const encodeCursor = (s: string, k: string, id: string) => Buffer.from(JSON.stringify({ s, k, id })).toString('base64url');

/**
 * Runs `query` (already filtered, selecting the row columns) as one page; `idColumn` is the table's
 * qualified id column.
 */
export async function paginate<Row extends { id: string }>(
  query: Knex.QueryBuilder,
  fields: Record<string, SortField>,
  idColumn: string,
  request: KeysetPageRequest,
): Promise<KeysetPage<Row>> {
  const descending = request.sort.startsWith('-');
  const field = fields[request.sort.replace(/^-/, '')];
  if (!field) throw new ValidationError('Unknown sort field.', [{ path: 'query.sort', message: `must be one of ${Object.keys(fields).join(', ')}` }]);
  const dir = descending ? 'desc' : 'asc';
  const q = query.clone().select(query.client.raw(`(${field.sql})::text as _sort_key`));
  if (request.cursor) {
    const c = decodeCursor(request.cursor, request.sort);
    q.whereRaw(`((${field.sql}), ${idColumn}) ${descending ? '<' : '>'} (?::${field.type}, ?::uuid)`, [c.k, c.id]);
  }
  q.orderByRaw(`${field.sql} ${dir}, ${idColumn} ${dir}`).limit(request.limit + 1);
  const rows = (await q) as Array<Row & { _sort_key: string }>;
  const more = rows.length > request.limit;
  const items = rows.slice(0, request.limit);
  const last = items[items.length - 1];
  return {
    items: items.map(({ _sort_key: _k, ...row }) => row as unknown as Row),
    next_cursor: more && last ? encodeCursor(request.sort, last._sort_key, last.id) : null,
  };
}

/** A LIKE pattern matching `text` anywhere, with LIKE's wildcards escaped. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
