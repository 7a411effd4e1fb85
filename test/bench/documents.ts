/**
 * npm run bench:documents — portal documents end to end, on a scratch database cloned from the
 * migrated template and an own queue prefix, API and workers in this process:
 * 1. upload BENCH_DOCS (default 200) documents of mixed kinds (PDF, DOCX, HTML, Markdown, CSV, text;
 *    BENCH_TEXT_MB, default 6, MB of text in all) through POST /api/portal/documents and wait until
 *    every one is indexed: documents/s and MB of text/s;
 * 2. top the chunks up to BENCH_CHUNKS (default 10,000), then BENCH_QUERIES (default 1,000) searches
 *    through GET /api/portal/documents/search: p50/p95, against a baseline of the same ts_rank query
 *    sent straight to PostgreSQL over the same chunks, with the ratio.
 * 3. session delivery while hostile documents are parsed: BENCH_MSG_RATE (default 100) messages/s
 *    spread over BENCH_SESSIONS (default 20) sessions, each timed from its POST until a subscriber of the session's SSE stream has it,
 *    first BENCH_QUIET_S (default 5) seconds with no document, then while a DOCX that inflates to
 *    BENCH_BOMB_MB (default 100) MB and an HTML page of BENCH_HTML_OPENERS (default 8,000) unclosed
 *    openers of each kind (quadratic for a backtracking tag stripper) are extracted, until both have
 *    settled: p50/p99/max of each window and each document's outcome. BENCH_ONLY_HOSTILE=1 runs
 *    only this step.
 * Smoke run: BENCH_DOCS=10 BENCH_TEXT_MB=0.2 BENCH_CHUNKS=200 BENCH_QUERIES=50.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { makeDocx, makeDocxBomb, makePdf, quadraticHtml } from '../helpers/documents.js';
import { subscribeSse } from './sse-subscriber.js';
import { percentile } from './percentile.js';

const DOCS = Number(process.env.BENCH_DOCS ?? 200);
const TEXT_MB = Number(process.env.BENCH_TEXT_MB ?? 6);
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 10_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 1_000);
const CONCURRENCY = Number(process.env.BENCH_UPLOAD_CONCURRENCY ?? 8);
const MSG_RATE = Number(process.env.BENCH_MSG_RATE ?? 100);
const QUIET_S = Number(process.env.BENCH_QUIET_S ?? 5);
const BOMB_MB = Number(process.env.BENCH_BOMB_MB ?? 100);
const HTML_OPENERS = Number(process.env.BENCH_HTML_OPENERS ?? 8000);
const ONLY_HOSTILE = process.env.BENCH_ONLY_HOSTILE === '1';
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 20);

const { ensureTemplate, cloneTemplate, dropDatabase, serverUrl } = await import('../helpers/databases.js');
const template = await ensureTemplate();
const scratch = await cloneTemplate(template);
const prefix = `sbbench-${randomBytes(4).toString('hex')}`;
const apiKey = 'bench-key';
Object.assign(process.env, {
  DATABASE_URL: serverUrl(scratch),
  QUEUE_PREFIX: prefix,
  NODE_ENV: 'test',
  API_KEYS: apiKey,
  WORKER_METRICS_PORT: '0',
  SERVICE_SESSION_SYSTEM: 'true',
  DOCUMENT_MAX_BYTES: String(50 * 1024 * 1024),
});

const { startServer } = await import('../../api/server.js');
(await import('../../shared/tool-catalog.js')).loadToolCatalog();
const { startWorkers } = await import('../../workers/runner.js');
const { handlers } = await import('../../workers/registry.js');
const { registry, closeQueues } = await import('../../shared/queues.js');
const { db, closeDb } = await import('../../shared/db/index.js');
const { shutdown, onShutdown } = await import('../../shared/lifecycle.js');

const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
const words = ('invoice shipment warranty refund pallet customer contract renewal llama umbrella turbine gasket router firmware ' +
  'schedule deadline budget forecast audit compliance kiln orchard harbour lantern meadow quarry saddle tundra velvet zephyr').split(' ');

/** Deterministic pseudo-prose of about `chars` characters. */
function prose(seed: number, chars: number): string {
  let x = seed * 2654435761 >>> 0;
  const out: string[] = [];
  let len = 0;
  while (len < chars) {
    x = (x * 1103515245 + 12345) >>> 0;
    const w = words[x % words.length]!;
    out.push(w);
    len += w.length + 1;
    if (x % 13 === 0) out.push(`item${x % 5000}.`);
  }
  return out.join(' ');
}

const kinds = ['pdf', 'docx', 'html', 'md', 'csv', 'txt'] as const;
function makeDocument(i: number, chars: number): { filename: string; type: string; content: Buffer; text: number } {
  const kind = kinds[i % kinds.length]!;
  const text = prose(i + 1, chars);
  switch (kind) {
    // The hand-written PDF carries one text object; large text in a PDF is realistic enough as one long line.
    case 'pdf': return { filename: `doc${i}.pdf`, type: 'application/pdf', content: makePdf(text), text: text.length };
    case 'docx': return { filename: `doc${i}.docx`, type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', content: makeDocx(text.match(/.{1,800}(\s|$)/g) ?? [text]), text: text.length };
    case 'html': return { filename: `doc${i}.html`, type: 'text/html', content: Buffer.from(`<html><body>${(text.match(/.{1,600}(\s|$)/g) ?? []).map((p) => `<p>${p}</p>`).join('')}</body></html>`), text: text.length };
    case 'md': return { filename: `doc${i}.md`, type: 'text/markdown', content: Buffer.from(`# Doc ${i}\n\n${text}`), text: text.length };
    case 'csv': return { filename: `doc${i}.csv`, type: 'text/csv', content: Buffer.from(`id,note\n${(text.match(/.{1,200}(\s|$)/g) ?? []).map((l, j) => `${j},"${l.trim()}"`).join('\n')}`), text: text.length };
    default: return { filename: `doc${i}.txt`, type: 'text/plain', content: Buffer.from(text), text: text.length };
  }
}

async function pool<T>(items: T[], limit: number, run: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await run(items[next++]!);
  }));
}

try {
  const workers = startWorkers(registry, handlers);
  onShutdown('workers', () => Promise.all(workers.map((w) => w.close())));
  const { url } = await startServer(0, '127.0.0.1');
  const [user] = (await db()('users').insert({ display_name: 'Bench', email: 'bench@example.test' }).returning(['user_id'])) as Array<{ user_id: string }>;
  const headers = { 'X-API-Key': apiKey, 'X-User-Id': user!.user_id };

  if (!ONLY_HOSTILE) await indexAndSearch(url, user!.user_id, headers);
  await deliveryDuringHostileDocuments(url, headers);
} finally {
  await shutdown();
  await closeQueues();
  await closeDb();
  await dropDatabase(scratch);
  await deleteKeysWithPrefix(prefix);
}
// A connection that a late job opened after the shutdown hooks ran would keep the process alive (and the bench lock held).
process.exit(0);

async function indexAndSearch(url: string, userId: string, headers: Record<string, string>) {
  const user = { user_id: userId };
  // --- 1. upload and index -------------------------------------------------------------
  const perDoc = Math.ceil((TEXT_MB * 1024 * 1024) / DOCS);
  const docs = Array.from({ length: DOCS }, (_, i) => makeDocument(i, perDoc));
  const textBytes = docs.reduce((n, d) => n + d.text, 0);
  const started = performance.now();
  await pool(docs, CONCURRENCY, async (d) => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(d.content)], { type: d.type }), d.filename);
    const res = await fetch(`${url}/api/portal/documents`, { method: 'POST', headers, body: form });
    if (res.status !== 201) throw new Error(`upload ${d.filename}: ${res.status} ${await res.text()}`);
  });
  for (;;) {
    const rows = (await db()('documents').select('rag_status').count('* as n').groupBy('rag_status')) as Array<{ rag_status: string; n: string }>;
    const done = rows.filter((r) => r.rag_status === 'indexed' || r.rag_status === 'failed').reduce((n, r) => n + Number(r.n), 0);
    if (done >= DOCS) {
      const failed = rows.find((r) => r.rag_status === 'failed');
      if (failed) throw new Error(`${failed.n} documents failed to index`);
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`indexing: ${DOCS} documents, ${fmt(textBytes / 1e6, 2)} MB of text in ${fmt(seconds, 2)} s → ${fmt(DOCS / seconds)} documents/s, ${fmt(textBytes / 1e6 / seconds, 2)} MB text/s`);

  // --- 2. search over CHUNKS chunks ----------------------------------------------------------
  const have = Number(((await db()('document_chunks').count('* as n')) as Array<{ n: string }>)[0]!.n);
  if (have < CHUNKS) {
    // Top up with chunks of one extra indexed document (straight SQL: the upload path was measured above).
    const documentId = randomUUID();
    await db()('documents').insert({ document_id: documentId, owner_id: user!.user_id, filename: 'topup.txt', size: 0, content_type: 'text/plain', checksum: '-', rag_status: 'indexed' });
    for (let i = have; i < CHUNKS; i += 1000) {
      const n = Math.min(1000, CHUNKS - i);
      await db()('document_chunks').insert(Array.from({ length: n }, (_, j) => ({ document_id: documentId, owner_id: user!.user_id, ordinal: i + j, content: prose(100_000 + i + j, 1400) })));
    }
  }
  await db().raw('analyze document_chunks');
  const total = Number(((await db()('document_chunks').count('* as n')) as Array<{ n: string }>)[0]!.n);
  const queries = Array.from({ length: QUERIES }, (_, i) => (i % 3 === 0 ? `"${words[i % words.length]} ${words[(i * 7) % words.length]}"` : `${words[i % words.length]} ${words[(i * 5 + 3) % words.length]}`));

  // Warm-up outside the measurement.
  for (const q of queries.slice(0, 20)) await fetch(`${url}/api/portal/documents/search?q=${encodeURIComponent(q)}`, { headers });
  const api: number[] = [];
  for (const q of queries) {
    const t = performance.now();
    const res = await fetch(`${url}/api/portal/documents/search?q=${encodeURIComponent(q)}&limit=10`, { headers });
    if (res.status !== 200) throw new Error(`search: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
    api.push(performance.now() - t);
  }
  const baseline: number[] = [];
  for (const q of queries) {
    const t = performance.now();
    await db().raw(
      `select chunk_id, ts_rank(tsv, q) as rank from document_chunks, websearch_to_tsquery('english', ?) q
        where owner_id = ? and tsv @@ q order by rank desc limit 10`,
      [q, user!.user_id],
    );
    baseline.push(performance.now() - t);
  }
  api.sort((a, b) => a - b);
  baseline.sort((a, b) => a - b);
  const [a50, a95, b50, b95] = [percentile(api, 50), percentile(api, 95), percentile(baseline, 50), percentile(baseline, 95)];
  console.log(`search over ${fmt(total, 0)} chunks, ${QUERIES} queries: API p50 ${fmt(a50, 2)} ms, p95 ${fmt(a95, 2)} ms (target p95 ≤ 50 ms)`);
  console.log(`baseline ts_rank straight in PostgreSQL: p50 ${fmt(b50, 2)} ms, p95 ${fmt(b95, 2)} ms; ratio API/baseline p50 ${fmt(a50 / b50, 2)}×, p95 ${fmt(a95 / b95, 2)}×`);
}

// --- 3. session delivery while hostile documents are parsed ---------------------------------
async function deliveryDuringHostileDocuments(url: string, headers: Record<string, string>) {
  const json = async (path: string, body: unknown) => {
    const res = await fetch(url + path, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, string>>;
  };
  const sessions = await Promise.all(
    Array.from({ length: SESSIONS }, async (_, i) => {
      const { user_id } = await json('/api/users', { phone_number: `+1555${String((Date.now() + i * 7919) % 1e7).padStart(7, '0')}` });
      const { session_id } = await json('/api/sessions/resolve', { user_id });
      const { interaction_id } = await json(`/api/sessions/${session_id}/interactions`, { channel: 'web' });
      return { session_id: session_id!, interaction_id: interaction_id! };
    }),
  );

  const sentAt = new Map<string, number>();
  let window: number[] = [];
  let errors = 0;
  const streams = sessions.map(({ session_id }) =>
    subscribeSse(`${url}/api/sessions/${session_id}/events?channel=bench`, { 'X-API-Key': apiKey }, (e) => {
      const data = JSON.parse(e.data) as { data?: { content?: string } };
      const t = sentAt.get(data.data?.content ?? '');
      if (t !== undefined) window.push(performance.now() - t);
    }),
  );
  await Promise.all(streams.map((s) => s.opened));
  let n = 0;
  let sent = 0;
  const timer = setInterval(() => {
    const { session_id, interaction_id } = sessions[n % sessions.length]!;
    const content = `m${n++}`;
    sent++;
    sentAt.set(content, performance.now());
    json(`/api/sessions/${session_id}/messages`, { channel: 'web', role: 'user', content, interaction_id }).catch(() => errors++);
  }, 1000 / MSG_RATE);
  // What this process's main thread (API, workers and this client) went through in each window: how
  // late its event loop ran, its garbage collections' pauses, and the CPU the whole process used.
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let gcPauses: number[] = [];
  const gc = new PerformanceObserver((list) => { for (const e of list.getEntries()) gcPauses.push(e.duration); });
  gc.observe({ entryTypes: ['gc'] });
  let cpu = process.cpuUsage();
  const machineTimes = () => cpus().reduce((t, c) => ({ idle: t.idle + c.times.idle, all: t.all + Object.values(c.times).reduce((a, b) => a + b, 0) }), { idle: 0, all: 0 });
  let machine = machineTimes();
  const report = (label: string, seconds: number) => {
    const sorted = [...window].sort((a, b) => a - b);
    const used = process.cpuUsage(cpu);
    const now = machineTimes();
    const busy = 1 - (now.idle - machine.idle) / (now.all - machine.all);
    console.log(
      `delivery ${label}: ${sorted.length} messages delivered, ${sent} sent in ${fmt(seconds, 1)} s at ${MSG_RATE}/s over ${SESSIONS} sessions (POST to SSE): p50 ${fmt(percentile(sorted, 50), 1)} ms, p99 ${fmt(percentile(sorted, 99), 1)} ms, max ${fmt(sorted.at(-1) ?? NaN, 1)} ms; failed POSTs ${errors}`,
    );
    console.log(
      `  this process: event loop delay p99 ${fmt(loop.percentile(99) / 1e6, 1)} ms, max ${fmt(loop.max / 1e6, 1)} ms; main-thread GC ${gcPauses.length} pauses, ${fmt(gcPauses.reduce((a, b) => a + b, 0), 0)} ms in all, longest ${fmt(Math.max(0, ...gcPauses), 1)} ms; CPU ${fmt((used.user + used.system) / 1e4 / seconds, 0)} % of one core (its threads included); machine ${fmt(busy * 100, 0)} % busy over ${cpus().length} cores`,
    );
    window = [];
    sent = 0;
    gcPauses = [];
    loop.reset();
    cpu = process.cpuUsage();
    machine = now;
  };

  const bomb = makeDocxBomb(BOMB_MB);
  const html = Buffer.from(`<p>Harbour lantern notes.</p>${quadraticHtml(HTML_OPENERS)}`);
  await new Promise((r) => setTimeout(r, QUIET_S * 1000));
  report('with no document', QUIET_S);

  const started = performance.now();
  const uploads = [
    { filename: 'bomb.docx', type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', content: bomb },
    { filename: 'openers.html', type: 'text/html', content: html },
  ];
  const ids: string[] = [];
  for (const d of uploads) {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(d.content)], { type: d.type }), d.filename);
    const res = await fetch(`${url}/api/portal/documents`, { method: 'POST', headers, body: form });
    if (res.status !== 201) throw new Error(`upload ${d.filename}: ${res.status} ${await res.text()}`);
    ids.push(((await res.json()) as { document_id: string }).document_id);
  }
  const settledAt = new Map<string, number>();
  while (settledAt.size < ids.length) {
    for (const row of (await db()('documents').whereIn('document_id', ids).whereIn('rag_status', ['indexed', 'failed']).select('document_id')) as Array<{ document_id: string }>) {
      if (!settledAt.has(row.document_id)) settledAt.set(row.document_id, performance.now() - started);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const hostileSeconds = (performance.now() - started) / 1000;
  report('while the hostile documents were extracted', hostileSeconds);
  clearInterval(timer);
  loop.disable();
  gc.disconnect();
  for (const s of streams) s.close();
  const rows = (await db()('documents').whereIn('document_id', ids).select('document_id', 'filename', 'size', 'rag_status', 'failure_reason')) as Array<Record<string, string>>;
  for (const r of rows) {
    console.log(`  ${r.filename} (${fmt(Number(r.size) / 1024, 0)} KB): ${r.rag_status} after ${fmt(settledAt.get(r.document_id!)! / 1000, 1)} s${r.failure_reason ? ` — ${r.failure_reason}` : ''}`);
  }
}
