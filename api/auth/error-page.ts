/** The HTML page a failed sign-in ends on: people arrive here in a browser, so no JSON, no stack. */
import type { Context } from 'koa';
import { AppError, problemKindOf } from '../../shared/errors.js';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Renders `err` as a small HTML page with the status of its error class (500 hides the detail). */
export function sendSignInErrorPage(ctx: Context, err: unknown): void {
  const kind = problemKindOf(err);
  const detail = err instanceof AppError ? err.message : 'Something went wrong on our side while signing you in.';
  if (!(err instanceof AppError)) ctx.state.log?.error({ err }, 'sign-in failed');
  ctx.status = kind.status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign-in failed</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}p.detail{background:#f6f6f6;padding:.75rem;border-radius:4px}</style></head>
<body>
<h1>Sign-in failed</h1>
<p class="detail">${escape(detail)}</p>
<p><a href="/api/global/auth/login">Sign in again</a></p>
<p><small>Request ${escape(String(ctx.state.requestId ?? ''))}</small></p>
</body>
</html>`;
}
