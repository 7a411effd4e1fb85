/** Schemas shared by the CRM routes: the actor header, list pages and a record's history. */
import type { Context } from 'koa';
import { z } from '../../shared/zod.js';
import { actorOf as personOrGiven } from '../auth/browser-session.js';
import { historyEntry } from '../../shared/crm/crm.schemas.js';

/** Who makes a change (recorded in the status/stage history): the signed-in person, else X-Actor, else "api". */
export const actorHeaders = z.object({
  'x-actor': z.string().trim().min(1).max(200).optional().openapi({ description: 'Who makes the change, recorded in the history (e.g. a user email); default `api`. A browser session is recorded as the signed-in person instead.' }),
});
export const actorOf = (headers: { 'x-actor'?: string }, ctx: Context) => personOrGiven(ctx, headers['x-actor'] ?? 'api');

export const listDescription = [
  'Cursor pagination: the answer is `{data, next_cursor}`; pass `next_cursor` as `cursor` (with the same `sort`) for the next page;',
  '`next_cursor` is null on the last page. The cursor is opaque: base64url of JSON `{s: sort, k: last sort key, id: last id}`;',
  'rows are ordered by the sort field then by id, and a page starts strictly after the previous page\'s last row, so rows',
  'inserted meanwhile never make a page repeat or skip older rows. A cursor used with another sort is a 400.',
].join('\n');

export const pageOf = <T extends z.ZodType>(item: T, name: string) =>
  z.object({ data: z.array(item), next_cursor: z.string().nullable() }).openapi(name);

export const toPage = <T>(p: { items: T[]; next_cursor: string | null }) => ({ data: p.items, next_cursor: p.next_cursor });

/** GET …/{id}/history of a lead or an opportunity: its changes, oldest first. */
export const historyList = z.object({ data: z.array(historyEntry) });
