/**
 * Tracing (OpenTelemetry): one trace of a request → its job's enqueue → the worker's run → its SQL
 * and publish, exported over OTLP. Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or its _TRACES_ form) is
 * set: then shared/telemetry-preload.ts, loaded before a role's modules (`node --import`), starts the
 * official Node SDK with the HTTP, Koa, pg and ioredis instrumentations, and BullMQ's queues and
 * workers carry the trace through Redis (bullmq-otel). The SDK reads the other standard OTEL_*
 * settings itself (protocol, headers, sampler, resource attributes). Off, nothing of it is loaded.
 */
import { register } from 'node:module';
import { BullMQOtel } from 'bullmq-otel';
import type { Telemetry } from 'bullmq';
import { config } from './config.js';
import { onShutdown } from './lifecycle.js';

let bullTelemetry: Telemetry | undefined;

/** Whether this process exports traces (OTLP endpoint set, OTEL_SDK_DISABLED not true). */
export const tracingEnabled = (): boolean => config().telemetry.enabled;

/**
 * Starts tracing when configured. Must run before koa, pg, ioredis and http are loaded: their
 * instrumentations patch them as they load (ES modules through an import hook that sees only those).
 */
export async function startTelemetry(): Promise<boolean> {
  const cfg = config().telemetry;
  if (!cfg.enabled) return false;
  const { createAddHookMessageChannel } = await import('import-in-the-middle');
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
  const [{ NodeSDK }, { HttpInstrumentation }, { KoaInstrumentation }, { PgInstrumentation }, { IORedisInstrumentation }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-koa'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
  ]);
  // Traces only: metrics are Prometheus' (/metrics) and logs go to stdout, unless OTEL_* asks for them too.
  process.env.OTEL_METRICS_EXPORTER ??= 'none';
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  const sdk = new NodeSDK({
    serviceName: cfg.serviceName,
    instrumentations: [
      // Probes and scrapes would make a trace each every few seconds.
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => /^\/(healthz|readyz|livez|metrics)\b/.test(req.url ?? '') }),
      new KoaInstrumentation(),
      new PgInstrumentation(),
      new IORedisInstrumentation(),
    ],
  });
  sdk.start();
  await waitForAllMessagesAcknowledged();
  bullTelemetry = new BullMQOtel({ tracerName: 'switchboard' });
  // Spans still buffered go out at shutdown (registered now, so closed after the role's own steps).
  onShutdown('telemetry', () => sdk.shutdown());
  return true;
}

/** The `telemetry` option of BullMQ queues and workers: set only while tracing runs. */
export function queueTelemetry(): { telemetry?: Telemetry } {
  return bullTelemetry ? { telemetry: bullTelemetry } : {};
}
