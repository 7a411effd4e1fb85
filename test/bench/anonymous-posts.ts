/**
 * npm run bench:anonymous-posts — what anonymous requests leave behind in an API process.
 *
 * One API process (no worker) on a database of its own; BENCH_REQUESTS POSTs without credentials,
 * each to /webhooks/alertmanager/<a random 4,000-character name> (every one refused, 404). The API's
 * RSS and V8 heap are read once it has been quiet (before), right after the posts (burst) and once
 * it has been quiet again (settled): what a request kept (a metric label, a limiter key or a cache
 * entry per path) stays in the settled figure, while the garbage of the burst is given back by V8's
 * memory reducer within tens of seconds of quiet. The run fails when the settled growth is 30 MB or more.
 *
 *   BENCH_REQUESTS=40000       requests sent
 *   BENCH_CONCURRENCY=32       requests in flight
 *   BENCH_NAME_LENGTH=4000     characters of each made-up source name
 *   BENCH_QUIET_SECONDS=45     quiet before each settled reading
 *   BENCH_BUILT=1              the compiled API (dist/) instead of the source under tsx
 *   BENCH_ROUNDS=1             bursts in a row: what requests keep grows with each, what V8 keeps for its heap does not
 */
import { randomBytes } from 'node:crypto';
import { benchStorage, fmt, httpCaller, inPool, loadavg, roleEnv, rssMb, runSecret, sleep, startRole, stopProcesses } from './bench-platform.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 40_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const NAME_LENGTH = Number(process.env.BENCH_NAME_LENGTH ?? 4000);
const QUIET = Number(process.env.BENCH_QUIET_SECONDS ?? 45);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const ENTRY = process.env.BENCH_BUILT === '1' ? 'dist/api/main.js' : 'api/main.ts';
const limitMb = 30;
const metricsToken = runSecret('metrics');

async function main() {
  const storage = await benchStorage();
  const { child: api, line } = await startRole(ENTRY, roleEnv(storage.database, storage.prefix, { API_KEYS: runSecret('key'), METRICS_TOKEN: metricsToken }), /API listening/);
  try {
    const url = /https?:\/\/[^\s"]+/.exec(line)![0];
    const caller = httpCaller(url, {}, CONCURRENCY);
    const metrics = httpCaller(url, { Authorization: `Bearer ${metricsToken}` }, 1);
    const name = () => randomBytes(Math.ceil(NAME_LENGTH / 2)).toString('hex').slice(0, NAME_LENGTH);
    const post = () => caller.call(`/webhooks/alertmanager/${name()}`, { version: '4', alerts: [] });
    /** RSS of the API and its V8 heap (total and used, from its own /metrics), in MB; the load average when read. */
    const memory = async () => {
      const text = String((await metrics.call('/metrics')).body);
      const mb = (metric: string) => Number(new RegExp(`^${metric} (\\S+)`, 'm').exec(text)?.[1]) / 2 ** 20;
      return { rss: rssMb(api.pid!).rss, heapTotal: mb('nodejs_heap_size_total_bytes'), heapUsed: mb('nodejs_heap_size_used_bytes'), load: loadavg() };
    };
    const show = (m: Awaited<ReturnType<typeof memory>>) => `RSS ${fmt(m.rss)} MB (heap ${fmt(m.heapUsed)} of ${fmt(m.heapTotal)} MB) [load ${m.load}]`;

    // Warm-up: the first requests load what every later one shares (routes, problem details, pools), and
    // the first scrape opens every queue for its gauge: neither should count as growth.
    await inPool(Array.from({ length: 500 }), CONCURRENCY, async () => void (await post()));
    await memory();
    await sleep(QUIET * 1000);
    const before = await memory();
    let growth = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      const statuses = new Map<number, number>();
      const started = Date.now();
      await inPool(Array.from({ length: REQUESTS }), CONCURRENCY, async () => {
        const { status } = await post();
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      });
      const seconds = (Date.now() - started) / 1000;
      const burst = await memory();
      await sleep(QUIET * 1000);
      const settled = await memory();
      growth = settled.rss - before.rss;
      if (round === 1) console.log(`before (quiet):      ${show(before)}`);
      console.log(`round ${round}: ${REQUESTS} anonymous posts (${NAME_LENGTH}-character names, ${round * REQUESTS} in all) in ${fmt(seconds)} s; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
      console.log(`  right after:       ${show(burst)}: ${fmt(burst.rss - before.rss)} MB`);
      console.log(`  after ${QUIET} s quiet: ${show(settled)}: growth ${fmt(growth)} MB (limit ${limitMb} for the first round)`);
      if (round === 1 && growth >= limitMb) process.exitCode = 1;
    }
    caller.close();
    metrics.close();
  } finally {
    await stopProcesses([api]);
    await storage.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
