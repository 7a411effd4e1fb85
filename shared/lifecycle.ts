/**
 * Orderly shutdown: each part of a process registers how it stops, and SIGTERM/SIGINT runs those
 * steps in reverse order of registration (stop accepting work first, close connections last).
 */
import { logger } from './logger.js';

type Step = { name: string; stop: () => Promise<unknown> | unknown };
const steps: Step[] = [];
let stopping: Promise<void> | undefined;

/** Registers a shutdown step; steps run last-registered first. */
export function onShutdown(name: string, stop: Step['stop']): void {
  steps.push({ name, stop });
}

/** Runs every registered shutdown step once; later calls return the same promise. */
export function shutdown(): Promise<void> {
  stopping ??= (async () => {
    for (const step of [...steps].reverse()) {
      try {
        await step.stop();
        logger('lifecycle').debug({ step: step.name }, 'stopped');
      } catch (err) {
        logger('lifecycle').error({ err, step: step.name }, 'shutdown step failed');
      }
    }
    steps.length = 0;
  })();
  return stopping;
}

/** Makes SIGTERM and SIGINT shut the process down cleanly; a second signal forces exit. */
export function handleSignals(): void {
  let received = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    received += 1;
    if (received > 1) process.exit(1);
    logger('lifecycle').info({ signal }, 'shutting down');
    void shutdown().then(() => process.exit(0));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
