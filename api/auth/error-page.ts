/** Small HTML error pages for people arriving in a browser (sign-in, app pages): no JSON, no stack. */
import type { Context } from 'koa';
import { AppError, problemKindOf } from '../../shared/errors.js';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A form of a page: POSTed to `action` with hidden `fields`, sent by one button. */
export interface PageForm {
  action: string;
  fields: Record<string, string>;
  button: string;
}

/** Writes an HTML page with a heading, a detail paragraph, an optional form and links. */
export function sendHtmlPage(ctx: Context, status: number, title: string, detail: string, links: Array<[href: string, text: string]>, form?: PageForm): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escape(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}p.detail{background:#f6f6f6;padding:.75rem;border-radius:4px}</style></head>
<body>
<h1>${escape(title)}</h1>
<p class="detail">${escape(detail)}</p>
${form ? `<form method="post" action="${escape(form.action)}">${Object.entries(form.fields).map(([k, v]) => `<input type="hidden" name="${escape(k)}" value="${escape(v)}">`).join('')}<button type="submit">${escape(form.button)}</button></form>` : ''}
${links.map(([href, text]) => `<p><a href="${escape(href)}">${escape(text)}</a></p>`).join('\n')}
<p><small>Request ${escape(String(ctx.state.requestId ?? ''))}</small></p>
</body>
</html>`;
}

/** Renders a failed sign-in with the status of its error class (a 500 hides the detail and is logged). */
export function sendSignInErrorPage(ctx: Context, err: unknown): void {
  const detail = err instanceof AppError ? err.message : 'Something went wrong on our side while signing you in.';
  if (!(err instanceof AppError)) ctx.state.log?.error({ err }, 'sign-in failed');
  sendHtmlPage(ctx, problemKindOf(err).status, 'Sign-in failed', detail, [['/api/global/auth/login', 'Sign in again']]);
}
