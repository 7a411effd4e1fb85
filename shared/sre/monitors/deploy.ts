/**
 * Deploying monitors to Prometheus: first the monitors of entities gone stale are taken out (deleted,
 * counted in `removed_stale`); then every pending and deployed monitor (not the disabled ones) goes
 * into one rule file in RULES_DIR, checked by promtool, swapped in atomically, loaded by POST
 * /-/reload and confirmed via /api/v1/rules. Nothing pending and the file already as it should be:
 * nothing is written. On any failure the previous file is put back (and reloaded), the pending
 * monitors stay pending with the error, and the stale ones are kept (the transaction rolls back).
 * One deployment at a time (transaction advisory lock).
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { db } from '../../db/index.js';
import { config } from '../../config.js';
import { ServiceUnavailableError, UpstreamError } from '../../errors.js';
import { prometheusClient } from '../../clients/prometheus.js';
import { logger } from '../../logger.js';
import { checkRuleFile, ruleFileText, type AlertingRule } from './rules.js';
import { deletedStaleMonitors, markMonitorsDeployed, monitorsToDeploy, recordDeployError, type Monitor } from './recommendations.store.js';

/** Name of the rule group and (with .yml) of the file in RULES_DIR. */
export const ruleGroup = 'switchboard-monitors';
const deployLock = 727_007;

export interface DeployOutcome {
  deployed: number;
  total: number;
  /** Rules of the previous file no longer in it (monitors removed, disabled or taken out as stale). */
  removed: number;
  /** Monitors of stale entities deleted by this deploy. */
  removed_stale: number;
  rule_file: string;
  checker: 'promtool' | 'schema' | null;
}

/** The rule of a monitor as deployed: its labels name the monitor and entity, which confirms loading and routes alerts. */
function deployedRule(m: Pick<Monitor, 'id' | 'entity_id' | 'rule'>): AlertingRule {
  return { ...m.rule, labels: { ...m.rule.labels, sre_monitor_id: m.id, sre_entity_id: m.entity_id } };
}

class DeployFailure extends Error {
  constructor(
    override readonly cause: unknown,
    readonly pending: string[],
    message: string,
  ) {
    super(message);
  }
}

/** Monitor ids named by the rules of a rule file (label sre_monitor_id). */
function monitorIdsIn(text: string | null): Set<string> {
  if (!text) return new Set();
  const doc = parseYaml(text) as { groups?: Array<{ rules?: Array<{ labels?: Record<string, string> }> }> } | null;
  return new Set((doc?.groups ?? []).flatMap((g) => g.rules ?? []).map((r) => r.labels?.sre_monitor_id).filter((id): id is string => typeof id === 'string'));
}

async function readIfExists(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Writes through a temporary file and a rename, so Prometheus never reads half a file. */
async function writeAtomically(file: string, text: string | null): Promise<void> {
  if (text === null) return rm(file, { force: true });
  const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

/** Waits until Prometheus reports every expected monitor id loaded from the file, without rule errors. */
async function confirmLoaded(client: ReturnType<typeof prometheusClient>, file: string, ids: Set<string>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let missing = ids.size;
  let broken: string[] = [];
  for (;;) {
    const groups = await client.ruleGroups();
    const rules = groups.filter((g) => g.name === ruleGroup && path.basename(g.file) === path.basename(file)).flatMap((g) => g.rules);
    const loaded = new Set(rules.map((r) => r.labels?.sre_monitor_id).filter(Boolean));
    missing = [...ids].filter((id) => !loaded.has(id)).length;
    broken = rules.filter((r) => r.health === 'err').map((r) => `${r.name}: ${r.lastError ?? 'error'}`);
    if (missing === 0 && broken.length === 0) return;
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new UpstreamError(
    missing ? `Prometheus did not load ${missing} of ${ids.size} rules after reload (is RULES_DIR in its rule_files?)` : `Prometheus reports rule errors: ${broken.slice(0, 5).join('; ')}`,
  );
}

/** Deploys every pending monitor (with the deployed ones, which stay in the file). */
export async function deployAllMonitors(): Promise<DeployOutcome> {
  const { metricsUrl } = config().sre.discovery;
  const rulesDir = path.resolve(config().sre.monitors.rulesDir);
  const file = path.join(rulesDir, `${ruleGroup}.yml`);
  if (!metricsUrl) throw new ServiceUnavailableError('METRICS_URL is not configured: there is no Prometheus to deploy to. (npm run dev starts one when the Debian packages prometheus and prometheus-alertmanager are installed: apt-get install prometheus prometheus-alertmanager, then restart it.)');
  const client = prometheusClient(metricsUrl);

  const result = await db().transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(?)', [deployLock]);
    const removedStale = await deletedStaleMonitors(trx);
    const monitors = await monitorsToDeploy(trx);
    const pending = monitors.filter((m) => m.status === 'pending').map((m) => m.id);
    const text = ruleFileText(ruleGroup, monitors.map(deployedRule));
    const previous = await readIfExists(file);
    const removed = [...monitorIdsIn(previous)].filter((id) => !monitors.some((m) => m.id === id)).length;
    if (!pending.length && (previous === text || (previous === null && monitors.length === 0))) {
      return { ok: true as const, outcome: { deployed: 0, total: monitors.length, removed, removed_stale: removedStale, rule_file: file, checker: null } };
    }

    await mkdir(rulesDir, { recursive: true });
    const candidate = `${file}.${randomBytes(4).toString('hex')}.candidate`;
    let swapped = false;
    try {
      await writeFile(candidate, text);
      const check = await checkRuleFile(candidate);
      if (!check.ok) throw new UpstreamError(`promtool rejected the rule file: ${check.error}`);
      await rename(candidate, file);
      swapped = true;
      await client.reload();
      await confirmLoaded(client, file, new Set(monitors.map((m) => m.id)));
      await markMonitorsDeployed(trx, pending);
      return { ok: true as const, outcome: { deployed: pending.length, total: monitors.length, removed, removed_stale: removedStale, rule_file: file, checker: check.checker } };
    } catch (err) {
      const message = (err as Error).message;
      await rm(candidate, { force: true });
      if (swapped) {
        await writeAtomically(file, previous);
        await client.reload().catch((e) => logger('sre').error({ err: e }, 'reload after restoring the previous rule file failed'));
      }
      // Thrown, so the transaction rolls back and the stale monitors (still in the restored file) stay.
      throw new DeployFailure(err, pending, message);
    }
  }).catch(async (err) => {
    if (!(err instanceof DeployFailure)) throw err;
    await recordDeployError(err.pending, err.message);
    throw err.cause instanceof UpstreamError ? err.cause : new UpstreamError(`Deploying monitors failed: ${err.message}`);
  });
  return result.outcome;
}
