/**
 * Orderly shutdown: each part of a process registers how it stops. SIGTERM/SIGINT first marks the
 * process as stopping (readiness fails at once), then runs the work steps in reverse order of
 * registration (stop accepting, finish what is held), and only then the connection steps (pools,
 * the bus, Redis), whenever those were opened: a connection made on first use registers after the
 * server or worker that uses it, yet must outlive the requests and jobs it serves. An overall
 * deadline (SHUTDOWN_TIMEOUT_MS) ends the process whatever is still running.
 */
import type http from 'node:http';
import { config } from './config.js';
import { logger } from './logger.js';

type Step = { name: string; stop: () => Promise<unknown> | unknown };
const work: Step[] = [];
const connections: Step[] = [];
let stopping: Promise<void> | undefined;
let stopRequested = false;
let signal: NodeJS.Signals | undefined;
let deadline: number | undefined;

/** Registers a step that stops work (a listener, workers, a scheduler); work steps run last-registered first. */
export function onShutdown(name: string, stop: Step['stop']): void {
  work.push({ name, stop });
}

/** Registers a connection (pool, Redis, bus) to close after every work step has finished; last-registered first. */
export function closeAtShutdown(name: string, close: Step['stop']): void {
  connections.push({ name, stop: close });
}

/** True from the moment shutdown began: readiness answers 503 from then on. */
export function isStopping(): boolean {
  return stopRequested;
}

/**
 * How long a listener behind a load balancer keeps serving after SIGTERM before it closes
 * (SHUTDOWN_DRAIN_DELAY_MS), so the balancer sees readiness fail and stops routing to it first.
 * None after SIGINT (a person's Ctrl-C) or a shutdown not caused by a signal: nothing routes there.
 */
export function drainDelayMs(): number {
  return signal === 'SIGTERM' ? config().shutdown.drainDelayMs : 0;
}

/** Milliseconds left before the overall shutdown deadline forces the process out (Infinity without one). */
export function shutdownTimeLeft(): number {
  return deadline === undefined ? Infinity : Math.max(0, deadline - Date.now());
}

/** What the forced close of an HTTP server's last connections leaves of the deadline, for the connections to close in. */
const closeReserveMs = 2_000;

/**
 * Registers the drain of an HTTP server behind a load balancer (web, tools). Once stopping, every
 * answer closes its connection, so keep-alive clients move to another replica. The shutdown step
 * keeps serving for the drain delay (readiness already fails), then stops accepting, runs
 * `beforeClose` (the web role ends its SSE streams), waits for the requests in flight and forces
 * what is left closed shortly before the overall deadline (10 s without one).
 */
export function drainOnShutdown(name: string, server: http.Server, beforeClose: () => void = () => {}): void {
  server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => void (isStopping() && !res.headersSent && res.setHeader('Connection', 'close')));
  onShutdown(name, async () => {
    await new Promise((resolve) => setTimeout(resolve, drainDelayMs()));
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    beforeClose();
    // A connection becomes idle when its last answer ends (an SSE stream included): close each then.
    server.closeIdleConnections();
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    const left = shutdownTimeLeft();
    const forced = setTimeout(() => server.closeAllConnections(), Number.isFinite(left) ? Math.max(0, left - closeReserveMs) : 10_000);
    await closed;
    clearInterval(idle);
    clearTimeout(forced);
  });
}

let current: string | undefined;

/** Runs and removes the steps, last-registered first (a step registered meanwhile runs too). */
async function run(steps: Step[]): Promise<void> {
  for (let step = steps.pop(); step; step = steps.pop()) {
    current = step.name;
    try {
      await step.stop();
      logger('lifecycle').debug({ step: step.name }, 'stopped');
    } catch (err) {
      logger('lifecycle').error({ err, step: step.name }, 'shutdown step failed');
    }
  }
  current = undefined;
}

/** Runs every registered step once (work, then connections, including any opened meanwhile); later calls return the same promise. */
export function shutdown(): Promise<void> {
  // Set before the first step runs (it starts synchronously, before `stopping` is assigned).
  stopRequested = true;
  stopping ??= (async () => {
    await run(work);
    await run(connections);
  })();
  return stopping;
}

/**
 * Shuts down (shutdown()) within `timeoutMs`: resolves true once every step has run, or false at the
 * deadline, after logging the step still running and those not yet run.
 */
export async function shutdownWithin(timeoutMs: number): Promise<boolean> {
  deadline ??= Date.now() + timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), shutdownTimeLeft())));
  const done = await Promise.race([shutdown().then(() => true as const), late]);
  clearTimeout(timer);
  if (!done) {
    logger('lifecycle').error({ timeoutMs, running: current, pending: [...work.toReversed(), ...connections.toReversed()].map((s) => s.name) }, 'shutdown deadline passed; exiting with work unfinished');
  }
  return done;
}

/** Makes SIGTERM and SIGINT shut the process down cleanly within SHUTDOWN_TIMEOUT_MS; a second signal forces exit. */
export function handleSignals(): void {
  let received = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    received += 1;
    if (received > 1) process.exit(1);
    signal = sig;
    const timeoutMs = config().shutdown.timeoutMs;
    logger('lifecycle').info({ signal: sig, drainDelayMs: drainDelayMs(), timeoutMs }, 'shutting down');
    // Past the deadline the orchestrator kills the process anyway; exiting first says why.
    void shutdownWithin(timeoutMs).then((done) => process.exit(done ? 0 : 1));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
