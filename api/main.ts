/** Web role entry (Procfile web): the Koa API, in ./role.ts. Tracing starts first: when OTEL_* settings ask for it, it must patch http, koa, pg and ioredis before the role loads them (shared/telemetry-preload.ts). */
import '../shared/telemetry-preload.js';

await import('./role.js');
