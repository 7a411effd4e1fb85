/**
 * deploy-all as the API asks for it: the deployment runs as a job on the rules queue, whose worker
 * pool shares RULES_DIR with Prometheus, and the request waits (MONITORS_DEPLOY_WAIT_MS) for its
 * outcome. Web processes need no access to the rule file, so they can run on any host.
 */
import { randomUUID } from 'node:crypto';
import { config } from '../../config.js';
import { AppError, ServiceUnavailableError, UpstreamError } from '../../errors.js';
import { enqueue, jobEvents } from '../../queues.js';
import { deployAllMonitors, type DeployOutcome } from './deploy.js';
import { installPlatformRules } from './platform-rules.js';
import { prometheusClient } from '../../clients/prometheus.js';

/** What the rules worker hands back: the outcome, or the error the API answers with. */
export type DeployJobResult = { ok: true; outcome: DeployOutcome } | { ok: false; unavailable: boolean; message: string };

/**
 * The job's work (workers/sre/monitors-deploy.job.ts): the platform's own rules (MONITORS_PLATFORM_RULES),
 * then the monitors, turning the API's error classes into data that crosses the queue.
 */
export async function runMonitorDeploy(): Promise<DeployJobResult> {
  try {
    const { monitors, discovery } = config().sre;
    const platform = monitors.platformRules && discovery.metricsUrl ? await installPlatformRules(monitors.rulesDir) : undefined;
    const outcome = await deployAllMonitors();
    // deploy-all reloads only when its own file changed.
    if (platform?.changed && outcome.checker === null) await prometheusClient(discovery.metricsUrl!).reload();
    return { ok: true, outcome };
  } catch (err) {
    if (err instanceof ServiceUnavailableError || err instanceof UpstreamError) return { ok: false, unavailable: err instanceof ServiceUnavailableError, message: err.message };
    throw err;
  }
}

/** Enqueues a deployment and waits for it; 503 when no rules worker finished it in time (the job is withdrawn if it has not started). */
export async function requestMonitorDeploy(waitMs = config().sre.monitors.deployWaitMs): Promise<DeployOutcome> {
  const events = await jobEvents('sre.monitors-deploy');
  const job = await enqueue('sre.monitors-deploy', { request_id: randomUUID() });
  let result: DeployJobResult;
  try {
    result = (await job.waitUntilFinished(events, waitMs)) as DeployJobResult;
  } catch (err) {
    if (/timed out/i.test((err as Error).message)) {
      await job.remove().catch(() => undefined); // running already: it finishes, and the next deploy sees its work
      throw new ServiceUnavailableError(`No worker of the rules queue deployed the monitors within ${waitMs / 1000} s: run a worker with WORKER_QUEUES including rules where RULES_DIR is shared with Prometheus.`);
    }
    throw err instanceof AppError ? err : new UpstreamError(`Deploying monitors failed: ${(err as Error).message}`);
  }
  if (!result.ok) throw result.unavailable ? new ServiceUnavailableError(result.message) : new UpstreamError(result.message);
  return result.outcome;
}
