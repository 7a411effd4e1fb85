/**
 * npm run bench:idle-streams — the memory an API process spends per open, idle SSE stream.
 *
 * One API process (no worker: nothing is published) on a database of its own; 2,500 sessions; then
 * 10,000 session streams (4 channels each) held open by client processes (./idle-streams-client.ts),
 * and the API's RSS printed at 0, 1k, 5k and 10k open streams, with the V8 heap beside it.
 * No target: the figure is printed to be watched from release to release.
 *
 * The stream caps apply as configured: SSE_MAX_STREAMS=10000 for the process, and the
 * streams are spread over 5 API keys so each holds 2,000 (SSE_MAX_STREAMS_PER_KEY's default).
 * File descriptors: the API holds one per stream, each client its share; this needs `ulimit -n`
 * above 10,000 (+ ~100) for the API process, which inherits it from this one; checked below.
 *
 *   BENCH_STREAMS=10000        streams at the last step (steps 0, 1k, 5k, then this)
 *   BENCH_CLIENTS=2            client processes holding them
 *   BENCH_SETTLE_SECONDS=10    wait after each step before reading memory
 *   BENCH_BUILT=1              the compiled API (dist/, npm run build first) instead of the source under tsx
 *
 * Memory is read twice per step: as found, and after a full garbage collection (the API runs with
 * --expose-gc and a SIGUSR2 handler that collects), which is what an idle process settles at once V8's memory
 * reducer has run.
 *   BENCH_HEAP_SNAPSHOTS=<dir> a V8 heap snapshot of the API after each step, written there (slow)
 */
import { fork, execFileSync, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchStorage, fmt, httpCaller, inPool, loadavg, roleEnv, rssMb, runSecret, sleep, startRole, stopProcesses } from './bench-platform.js';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 10_000);
/** BENCH_BUILT=1: the compiled API (npm run build first), as npm start runs it; else the source under tsx. */
const ENTRY = process.env.BENCH_BUILT === '1' ? 'dist/api/main.js' : 'api/main.ts';
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 2);
const SETTLE = Number(process.env.BENCH_SETTLE_SECONDS ?? 10);
const CHANNELS = ['voice', 'chat', 'sms', 'slack'] as const;
const KEYS = [1, 2, 3, 4, 5].map((i) => runSecret(`key-${i}`));
const perKeyCap = Math.ceil(STREAMS / KEYS.length);
const steps = [0, 1_000, 5_000, STREAMS].filter((n, i, all) => n <= STREAMS && all.indexOf(n) === i);
const here = path.dirname(fileURLToPath(import.meta.url));

function fileLimit(): number {
  return Number(execFileSync('sh', ['-c', 'ulimit -n']).toString().trim());
}

async function main() {
  const limit = fileLimit();
  if (limit < STREAMS + 200) throw new Error(`ulimit -n is ${limit}: the API needs one descriptor per stream; raise it (ulimit -n ${STREAMS + 1000}) and run again.`);
  const storage = await benchStorage();
  const children: ChildProcess[] = [];
  const clients: ChildProcess[] = [];
  try {
    const env = roleEnv(storage.database, storage.prefix, {
      API_KEYS: KEYS.join(','),
      SSE_MAX_STREAMS: String(STREAMS),
      SSE_MAX_STREAMS_PER_KEY: String(perKeyCap),
    });
    const snapshots = process.env.BENCH_HEAP_SNAPSHOTS;
    // SIGUSR2 runs a full garbage collection in the API: the memory an idle process settles at, without the garbage opening the streams left.
    const gcOnSignal = `process.on('SIGUSR2', () => { gc(); process.stdout.write('gc done\\n'); });`;
    const gcFlags = ['--expose-gc', '--import', `data:text/javascript,${encodeURIComponent(gcOnSignal)}`];
    const { child: api, line } = await startRole(ENTRY, env, /API listening/, snapshots ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshots}`] : gcFlags);
    /** RSS after a full garbage collection (SIGUSR2). */
    const rssAfterGc = async () => {
      if (snapshots) return NaN;
      const done = new Promise<void>((resolve) => {
        const onData = (d: Buffer) => {
          if (!d.toString().includes('gc done')) return;
          api.stdout!.off('data', onData);
          resolve();
        };
        api.stdout!.on('data', onData);
      });
      api.kill('SIGUSR2');
      await done;
      await sleep(1000);
      return rssMb(api.pid!).rss;
    };
    /** Asks the API for a heap snapshot and waits until it is written (the process answers nothing meanwhile). */
    const heapSnapshot = async () => {
      if (!snapshots) return;
      const count = () => readdirSync(snapshots).filter((f) => f.endsWith('.heapsnapshot')).length;
      const before = count();
      api.kill('SIGUSR2');
      while (count() === before) await sleep(500);
      await metric('process_resident_memory_bytes');
    };
    children.push(api);
    const url = /"url":"([^"]+)"/.exec(line)![1]!;
    const { call, close } = httpCaller(url, { 'X-API-Key': KEYS[0]! }, 16);
    const metric = async (name: string) => {
      const text = (await call('/metrics')).body as string;
      return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
    };
    await sleep(SETTLE * 1000);
    const started = rssMb(api.pid!).rss;

    const sessionCount = Math.ceil(STREAMS / CHANNELS.length);
    const sessions: string[] = new Array(sessionCount);
    await inPool([...Array(sessionCount).keys()], 16, async (i) => {
      const user = await call('/api/users', { phone_number: `+1666${String(i).padStart(7, '0')}` });
      const session = await call('/api/sessions/resolve', { user_id: user.body.user_id });
      if (!session.body?.session_id) throw new Error(`session ${i}: HTTP ${session.status} ${JSON.stringify(session.body)}`);
      sessions[i] = session.body.session_id;
    });
    close();
    // Stream k: session k / 4, channel k mod 4, API key k mod 5; client k mod CLIENTS holds it.
    const all = Array.from({ length: STREAMS }, (_, k) => ({
      url: `${url}/api/sessions/${sessions[Math.floor(k / CHANNELS.length)]}/events?channel=${CHANNELS[k % CHANNELS.length]}`,
      key: KEYS[k % KEYS.length]!,
    }));
    for (let c = 0; c < CLIENTS; c++) {
      const client = fork(path.join(here, 'idle-streams-client.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      client.send({ streams: all.filter((_, k) => k % CLIENTS === c) });
      clients.push(client);
    }
    const openUpTo = (n: number) =>
      Promise.all(
        clients.map(
          (client, c) =>
            new Promise<{ opened: number; failed: number; dropped: number; firstError?: string }>((resolve) => {
              client.once('message', resolve);
              // Client c holds streams c, c+CLIENTS, …: its share of the first n.
              client.send({ openUpTo: Math.floor(n / CLIENTS) + (c < n % CLIENTS ? 1 : 0) });
            }),
        ),
      );

    console.log(`idle streams: one API process (${ENTRY}, no worker), ${sessionCount} sessions × ${CHANNELS.length} channels, ${CLIENTS} client processes; SSE_MAX_STREAMS=${STREAMS}, ${KEYS.length} API keys × SSE_MAX_STREAMS_PER_KEY=${perKeyCap}; ulimit -n ${limit}`);
    console.log(`  API RSS just started      ${fmt(started)} MB`);
    const rows: Array<{ n: number; rss: number; settled: number }> = [];
    for (const n of steps) {
      const t = Date.now();
      const answers = n ? await openUpTo(n) : [];
      const openedIn = (Date.now() - t) / 1000;
      await sleep(SETTLE * 1000);
      const failed = answers.reduce((s, a) => s + a.failed, 0);
      const dropped = answers.reduce((s, a) => s + a.dropped, 0);
      const { rss } = rssMb(api.pid!);
      const [heapUsed, heapTotal, external, gauge] = await Promise.all([
        metric('nodejs_heap_size_used_bytes'),
        metric('nodejs_heap_size_total_bytes'),
        metric('nodejs_external_memory_bytes'),
        metric('switchboard_session_sse_streams'),
      ]);
      const settled = await rssAfterGc();
      const heapAfter = await metric('nodejs_heap_size_used_bytes');
      rows.push({ n, rss, settled });
      await heapSnapshot();
      const perStream = n ? ((settled - rows[0]!.settled) * 1024) / n : NaN;
      console.log(
        `  ${String(n).padStart(6)} streams  RSS ${fmt(settled).padStart(6)} MB after a full GC (${fmt(rss)} MB before it)   V8 heap used ${fmt(heapAfter / 2 ** 20)} MB after GC (${fmt(heapUsed / 2 ** 20)} of ${fmt(heapTotal / 2 ** 20)} before), external ${fmt(external / 2 ** 20)} MB` +
          `   open per API ${gauge}${n ? `   ≈ ${fmt(perStream)} KB per stream over 0` : ''}` +
          `${n ? `   (opened in ${fmt(openedIn)} s; failed ${failed}${failed ? `: ${answers.find((a) => a.firstError)?.firstError}` : ''}; dropped ${dropped})` : ''}`,
      );
    }
    const last = rows.at(-1)!;
    console.log(`at ${STREAMS} streams: ${fmt(last.settled)} MB RSS after a full GC, ${fmt(last.rss)} MB before it [load ${loadavg()}]`);
  } finally {
    for (const client of clients) client.disconnect();
    await stopProcesses([...clients, ...children]);
    await storage.drop();
  }
}

await main();
process.exit(0);
