/** The request body exactly as the provider sent it, for its signature check. */
import type { Context } from 'koa';

/** Form parameters exactly as sent (a Twilio signature covers every one of them, known or not). */
export function formParams(ctx: Context): Record<string, string> {
  const raw = (ctx.request as { rawBody?: string }).rawBody;
  if (typeof raw === 'string') return Object.fromEntries(new URLSearchParams(raw));
  const body = (ctx.request as { body?: unknown }).body;
  return body && typeof body === 'object' ? Object.fromEntries(Object.entries(body).map(([k, v]) => [k, String(v)])) : {};
}

/** The raw body text (a Slack signature covers the exact bytes). */
export function rawBody(ctx: Context): string {
  const raw = (ctx.request as { rawBody?: string }).rawBody;
  return typeof raw === 'string' ? raw : JSON.stringify((ctx.request as { body?: unknown }).body ?? {});
}
