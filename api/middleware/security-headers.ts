/**
 * Security headers on every answer: no MIME sniffing, no framing by other sites, a strict referrer
 * policy, a content security policy (pages: this origin's scripts and styles only; API answers:
 * nothing at all), and HSTS where PUBLIC_URL is https. Answers to a caller with credentials are
 * personal: `no-store`, so no shared cache or browser history keeps them.
 */
import type { Middleware } from 'koa';
import { config } from '../../shared/config.js';

/**
 * Pages: this origin's scripts only, none inline (the built app and the API reference load every script
 * from a file). Vite's development server injects an inline preamble (React refresh), so `inlineScripts`
 * is set only when the app is served through Vite.
 */
const pagePolicy = (inlineScripts: boolean) =>
  [
    "default-src 'self'",
    inlineScripts ? "script-src 'self' 'unsafe-inline'" : "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self' ws: wss:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
const apiPolicy = "default-src 'none'; frame-ancestors 'none'";

export function securityHeaders(options: { inlineScripts: boolean }): Middleware {
  const hsts = config().publicUrl.startsWith('https://');
  const pages = pagePolicy(options.inlineScripts);
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('X-Frame-Options', 'DENY');
      ctx.set('Referrer-Policy', 'strict-origin-when-cross-origin');
      if (!ctx.response.get('Content-Security-Policy')) ctx.set('Content-Security-Policy', ctx.response.is('html') ? pages : apiPolicy);
      if (hsts) ctx.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
      const personal = ctx.state.authority || ctx.state.person || ctx.get('Authorization') || ctx.get('X-API-Key') || ctx.get('Cookie');
      if (personal && !ctx.response.get('Cache-Control')) ctx.set('Cache-Control', 'no-store');
    }
  };
}
