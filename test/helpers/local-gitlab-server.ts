/**
 * A local server speaking GitLab's REST API v4 (https://docs.gitlab.com/api/rest/) for the endpoints the
 * issue-tracker tools use, over one in-memory project: branches of files, commits, merge requests,
 * issues, notes, pipelines and jobs. Shapes follow GitLab's documented responses (projects, repository
 * tree and files, commits, merge requests and their diffs, issues, notes, pipelines, jobs), as do its
 * errors ({"message": ...} with 400/401/403/404/405/409). http, or https with a given key and certificate.
 */
import http from 'node:http';
import https from 'node:https';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';

type Files = Map<string, string>;
type Row = Record<string, any>;

export interface LocalGitLabOptions {
  projectPath?: string;
  /** Token with write access (PRIVATE-TOKEN). */
  token: string;
  /** Token with read access only (a Reporter): writes answer 403. */
  readOnlyToken?: string;
  tls?: { key: string; cert: string };
}

export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: any;
}

const sha = (s: string) => createHash('sha1').update(s).digest('hex');
const now = () => new Date().toISOString();

export async function startLocalGitLab(opts: LocalGitLabOptions) {
  const projectPath = opts.projectPath ?? 'platform/switchboard-demo';
  const projectId = 42;
  const branches = new Map<string, { files: Files; commit: string }>();
  const commits = new Map<string, Row>();
  const mergeRequests: Row[] = [];
  const issues: Row[] = [];
  const notes = new Map<string, Row[]>();
  const pipelines: Row[] = [];
  const jobs = new Map<number, Row[]>();
  const requests: Recorded[] = [];
  let noteId = 500;
  /** Milliseconds every answer is held back (to make the client time out). */
  let delayMs = 0;
  /** Statuses the next write requests are answered with after being carried out (a proxy's 502 after GitLab did the work). */
  const lostAnswers: number[] = [];
  let externalUrl = '';

  const author = { id: 7, username: 'maria', name: 'Maria Ops', state: 'active', web_url: '' };
  const commitRow = (message: string, branch: string, parent?: string) => {
    const id = sha(`${message}${branch}${Math.random()}`);
    const row = {
      id, short_id: id.slice(0, 8), title: message.split('\n')[0], message, author_name: author.name, author_email: 'maria@example.com',
      committer_name: author.name, committer_email: 'maria@example.com', authored_date: now(), committed_date: now(), created_at: now(),
      parent_ids: parent ? [parent] : [], web_url: `${externalUrl}/${projectPath}/-/commit/${id}`,
    };
    commits.set(id, row);
    return row;
  };

  const seed = () => {
    const files: Files = new Map([
      ['README.md', '# Demo\n\nA demo project.\n'],
      ['src/index.ts', "export const answer = 42;\n"],
      ['src/lib/util.ts', 'export function add(a: number, b: number) {\n  return a + b;\n}\n'],
      ['docs/guide.md', '# Guide\n'],
      ['assets/logo.bin', '\u0000\u0001binary'],
    ]);
    const first = commitRow('Initial commit', 'main');
    branches.set('main', { files, commit: first.id });
    issues.push(issueRow({ title: 'Checkout latency', description: 'p99 above 2 s', labels: 'bug,sre' }));
    notes.set('issue:1', [noteRow('Seen again this morning.'), { ...noteRow('changed the description'), system: true }]);
    const pipeline = { id: 900, iid: 1, project_id: projectId, status: 'failed', ref: 'main', sha: first.id, before_sha: '0'.repeat(40), tag: false, source: 'push',
      created_at: now(), updated_at: now(), started_at: now(), finished_at: now(), duration: 95, queued_duration: 1.2, coverage: null,
      user: author, web_url: `${externalUrl}/${projectPath}/-/pipelines/900` };
    pipelines.push(pipeline);
    jobs.set(900, [
      jobRow(9001, 'build', 'build', 'success', 40, pipeline),
      jobRow(9002, 'unit', 'test', 'failed', 50, pipeline),
      jobRow(9003, 'lint', 'test', 'success', 5, pipeline, true),
    ]);
  };

  function jobRow(id: number, name: string, stage: string, status: string, duration: number, pipeline: Row, allowFailure = false) {
    return { id, name, stage, status, ref: pipeline.ref, tag: false, allow_failure: allowFailure, duration, queued_duration: 0.5, created_at: now(), started_at: now(), finished_at: now(),
      user: author, pipeline: { id: pipeline.id, project_id: projectId, ref: pipeline.ref, sha: pipeline.sha, status: pipeline.status }, web_url: `${externalUrl}/${projectPath}/-/jobs/${id}`, artifacts: [] };
  }
  function issueRow(b: Row): Row {
    const iid = issues.length + 1;
    return { id: 1000 + iid, iid, project_id: projectId, title: b.title, description: b.description ?? null, state: 'opened', labels: splitLabels(b.labels),
      author, assignees: [], confidential: Boolean(b.confidential), created_at: now(), updated_at: now(), closed_at: null, web_url: `${externalUrl}/${projectPath}/-/issues/${iid}` };
  }
  function noteRow(body: string): Row {
    return { id: ++noteId, body, author, created_at: now(), updated_at: now(), system: false, noteable_type: 'Issue' };
  }
  const splitLabels = (v: unknown): string[] => (Array.isArray(v) ? v : String(v ?? '').split(',')).map((s) => String(s).trim()).filter(Boolean);

  class Answer {
    constructor(readonly status: number, readonly body: unknown, readonly headers: Record<string, string> = {}) {}
  }
  const fail = (status: number, message: unknown) => new Answer(status, { message });
  const paged = (rows: Row[], q: URLSearchParams) => {
    const page = Number(q.get('page') ?? 1);
    const perPage = Number(q.get('per_page') ?? 20);
    const slice = rows.slice((page - 1) * perPage, page * perPage);
    const more = page * perPage < rows.length;
    return new Answer(200, slice, { 'X-Page': String(page), 'X-Per-Page': String(perPage), 'X-Total': String(rows.length), 'X-Next-Page': more ? String(page + 1) : '' });
  };
  const mrView = (m: Row) => ({ ...m, web_url: `${externalUrl}/${projectPath}/-/merge_requests/${m.iid}` });

  /** A unified diff of one file between two versions (whole-file hunk: enough for counting lines). */
  const fileDiff = (before: string | undefined, after: string | undefined) => {
    const lines = (s: string | undefined) => (s ? s.replace(/\n$/, '').split('\n') : []);
    const old = lines(before);
    const neu = lines(after);
    return `@@ -1,${old.length} +1,${neu.length} @@\n${[...old.map((l) => `-${l}`), ...neu.map((l) => `+${l}`)].join('\n')}\n`;
  };

  function route(method: string, rest: string, q: URLSearchParams, body: Row, writer: boolean): Answer {
    const write = method !== 'GET';
    if (write && !writer) return fail(403, '403 Forbidden');
    if (rest === '' && method === 'GET') {
      return new Answer(200, { id: projectId, name: projectPath.split('/').pop(), path_with_namespace: projectPath, default_branch: 'main', visibility: 'private', web_url: `${externalUrl}/${projectPath}` });
    }
    let m: RegExpMatchArray | null;
    if (rest === '/repository/tree' && method === 'GET') {
      const ref = q.get('ref') ?? 'main';
      const branch = branches.get(ref);
      if (!branch) return fail(404, '404 Tree Not Found');
      const base = (q.get('path') ?? '').replace(/^\/|\/$/g, '');
      const recursive = q.get('recursive') === 'true';
      const entries = new Map<string, Row>();
      for (const file of [...branch.files.keys()].sort()) {
        if (base && !file.startsWith(`${base}/`)) continue;
        const relative = base ? file.slice(base.length + 1) : file;
        const parts = relative.split('/');
        const depth = recursive ? parts.length : 1;
        for (let i = 1; i <= depth; i++) {
          const path = [base, ...parts.slice(0, i)].filter(Boolean).join('/');
          const type = i === parts.length ? 'blob' : 'tree';
          entries.set(path, { id: sha(path), name: parts[i - 1], type, path, mode: type === 'tree' ? '040000' : '100644' });
        }
      }
      if (base && entries.size === 0) return fail(404, '404 Tree Not Found');
      return paged([...entries.values()], q);
    }
    if ((m = rest.match(/^\/repository\/files\/([^/]+)$/)) && method === 'GET') {
      const path = decodeURIComponent(m[1]!);
      const ref = q.get('ref');
      if (!ref) return fail(400, 'ref is missing');
      const branch = branches.get(ref);
      const content = branch?.files.get(path);
      if (content === undefined) return fail(404, '404 File Not Found');
      const bytes = Buffer.from(content, 'utf8');
      return new Answer(200, { file_name: path.split('/').pop(), file_path: path, size: bytes.length, encoding: 'base64', content: bytes.toString('base64'),
        content_sha256: createHash('sha256').update(bytes).digest('hex'), ref, blob_id: sha(content), commit_id: branch!.commit, last_commit_id: branch!.commit });
    }
    if ((m = rest.match(/^\/repository\/branches\/([^/]+)$/)) && method === 'GET') {
      const name = decodeURIComponent(m[1]!);
      const branch = branches.get(name);
      if (!branch) return fail(404, '404 Branch Not Found');
      return new Answer(200, { name, merged: false, protected: name === 'main', default: name === 'main', commit: commits.get(branch.commit), web_url: `${externalUrl}/${projectPath}/-/tree/${name}` });
    }
    if (rest === '/repository/commits' && method === 'POST') {
      let branch = branches.get(body.branch);
      if (!branch) {
        const start = body.start_branch ? branches.get(body.start_branch) : undefined;
        if (!start) return fail(400, 'You can only create or edit files when you are on a branch');
        branch = { files: new Map(start.files), commit: start.commit };
      }
      const files = new Map(branch.files);
      for (const a of body.actions ?? []) {
        if (a.action === 'create' && files.has(a.file_path)) return fail(400, 'A file with this name already exists');
        if (a.action === 'update' && !files.has(a.file_path)) return fail(400, "A file with this name doesn't exist");
        if (a.action === 'create' || a.action === 'update') files.set(a.file_path, a.encoding === 'base64' ? Buffer.from(a.content, 'base64').toString('utf8') : a.content);
        else if (a.action === 'delete') files.delete(a.file_path);
        else return fail(400, `action ${a.action} is not supported here`);
      }
      const commit = commitRow(body.commit_message, body.branch, branch.commit);
      branches.set(body.branch, { files, commit: commit.id });
      return new Answer(201, { ...commit, stats: { additions: 1, deletions: 0, total: 1 }, status: null });
    }
    if (rest === '/merge_requests' && method === 'GET') {
      const state = q.get('state');
      const search = q.get('search')?.toLowerCase();
      const rows = mergeRequests
        .filter((r) => (!state || state === 'all' || r.state === state) && (!q.get('source_branch') || r.source_branch === q.get('source_branch')))
        .filter((r) => (!q.get('target_branch') || r.target_branch === q.get('target_branch')) && (!search || `${r.title} ${r.description}`.toLowerCase().includes(search)))
        .slice()
        .reverse();
      return paged(rows.map(mrView), q);
    }
    if (rest === '/merge_requests' && method === 'POST') {
      if (!branches.has(body.source_branch)) return fail(404, '404 Source branch Not Found');
      if (!branches.has(body.target_branch)) return fail(404, '404 Target branch Not Found');
      const open = mergeRequests.find((r) => r.state === 'opened' && r.source_branch === body.source_branch && r.target_branch === body.target_branch);
      if (open) return fail(409, [`Another open merge request already exists for this source branch: !${open.iid}`]);
      const iid = mergeRequests.length + 1;
      const row = { id: 2000 + iid, iid, project_id: projectId, title: body.title, description: body.description ?? null, state: 'opened', draft: false, work_in_progress: false,
        source_branch: body.source_branch, target_branch: body.target_branch, labels: splitLabels(body.labels), author, assignees: [], merge_status: 'can_be_merged',
        detailed_merge_status: 'mergeable', sha: branches.get(body.source_branch)!.commit, created_at: now(), updated_at: now(), merged_at: null, closed_at: null };
      mergeRequests.push(row);
      return new Answer(201, mrView(row));
    }
    if ((m = rest.match(/^\/merge_requests\/(\d+)(\/diffs|\/notes|\/merge)?$/))) {
      const row = mergeRequests.find((r) => r.iid === Number(m![1]));
      if (!row) return fail(404, '404 Not found');
      const sub = m[2];
      if (!sub && method === 'GET') return new Answer(200, mrView(row));
      if (!sub && method === 'PUT') {
        if (body.title !== undefined) row.title = body.title;
        if (body.description !== undefined) row.description = body.description;
        if (body.labels !== undefined) row.labels = splitLabels(body.labels);
        if (body.state_event === 'close' && row.state === 'opened') row.state = 'closed';
        if (body.state_event === 'reopen' && row.state === 'closed') row.state = 'opened';
        row.updated_at = now();
        return new Answer(200, mrView(row));
      }
      if (sub === '/diffs' && method === 'GET') {
        const source = branches.get(row.source_branch)?.files ?? new Map();
        const target = branches.get(row.target_branch)?.files ?? new Map();
        const paths = [...new Set([...source.keys(), ...target.keys()])].sort().filter((p) => source.get(p) !== target.get(p));
        return paged(paths.map((p) => ({ old_path: p, new_path: p, a_mode: '100644', b_mode: '100644', new_file: !target.has(p), renamed_file: false, deleted_file: !source.has(p),
          generated_file: false, diff: fileDiff(target.get(p), source.get(p)) })), q);
      }
      if (sub === '/merge' && method === 'PUT') {
        if (row.state !== 'opened') return fail(405, '405 Method Not Allowed');
        const source = branches.get(row.source_branch)!;
        const target = branches.get(row.target_branch)!;
        const commit = commitRow(`Merge branch '${row.source_branch}' into '${row.target_branch}'`, row.target_branch, target.commit);
        branches.set(row.target_branch, { files: new Map(source.files), commit: commit.id });
        Object.assign(row, { state: 'merged', merged_at: now(), merge_commit_sha: commit.id, updated_at: now() });
        return new Answer(200, mrView(row));
      }
      if (sub === '/notes' && method === 'POST') {
        const note = { ...noteRow(body.body), noteable_type: 'MergeRequest' };
        notes.set(`mr:${row.iid}`, [...(notes.get(`mr:${row.iid}`) ?? []), note]);
        return new Answer(201, note);
      }
    }
    if (rest === '/issues' && method === 'GET') {
      const state = q.get('state');
      const wanted = splitLabels(q.get('labels'));
      const search = q.get('search')?.toLowerCase();
      const rows = issues
        .filter((i) => (!state || state === 'all' || i.state === state) && wanted.every((l) => i.labels.includes(l)))
        .filter((i) => !search || `${i.title} ${i.description}`.toLowerCase().includes(search))
        .slice()
        .reverse();
      return paged(rows, q);
    }
    if (rest === '/issues' && method === 'POST') {
      if (!body.title) return fail(400, { title: ["can't be blank"] });
      const row = issueRow(body);
      issues.push(row);
      return new Answer(201, row);
    }
    if ((m = rest.match(/^\/issues\/(\d+)(\/notes)?$/))) {
      const row = issues.find((i) => i.iid === Number(m![1]));
      if (!row) return fail(404, '404 Not found');
      if (!m[2] && method === 'GET') return new Answer(200, row);
      if (!m[2] && method === 'PUT') {
        if (body.title !== undefined) row.title = body.title;
        if (body.description !== undefined) row.description = body.description;
        if (body.labels !== undefined) row.labels = splitLabels(body.labels);
        if (body.add_labels !== undefined) row.labels = [...new Set([...row.labels, ...splitLabels(body.add_labels)])];
        if (body.remove_labels !== undefined) row.labels = row.labels.filter((l: string) => !splitLabels(body.remove_labels).includes(l));
        if (body.state_event === 'close') Object.assign(row, { state: 'closed', closed_at: now() });
        if (body.state_event === 'reopen') Object.assign(row, { state: 'opened', closed_at: null });
        row.updated_at = now();
        return new Answer(200, row);
      }
      const key = `issue:${row.iid}`;
      if (m[2] && method === 'GET') {
        const list = [...(notes.get(key) ?? [])];
        if (q.get('sort') !== 'asc') list.reverse();
        return paged(list, q);
      }
      if (m[2] && method === 'POST') {
        const note = noteRow(body.body);
        notes.set(key, [...(notes.get(key) ?? []), note]);
        return new Answer(201, note);
      }
    }
    if (rest === '/pipelines/latest' && method === 'GET') {
      const ref = q.get('ref') ?? 'main';
      const latest = pipelines.filter((p) => p.ref === ref).at(-1);
      return latest ? new Answer(200, latest) : fail(404, '404 Not found');
    }
    if ((m = rest.match(/^\/pipelines\/(\d+)(\/jobs)?$/)) && method === 'GET') {
      const pipeline = pipelines.find((p) => p.id === Number(m![1]));
      if (!pipeline) return fail(404, '404 Not found');
      return m[2] ? paged(jobs.get(pipeline.id) ?? [], q) : new Answer(200, pipeline);
    }
    return fail(404, '404 Not Found');
  }

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      let body: Row = {};
      try {
        body = data ? JSON.parse(data) : {};
      } catch {
        // GitLab also takes form bodies; these tools send JSON.
      }
      requests.push({ method: req.method!, path: url.pathname, query: url.searchParams, headers: req.headers, body });
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      const send = (a: Answer) => {
        if (res.destroyed) return;
        res.writeHead(a.status, { 'Content-Type': 'application/json', ...a.headers }).end(JSON.stringify(a.body));
      };
      const token = req.headers['private-token'];
      if (token !== opts.token && (!opts.readOnlyToken || token !== opts.readOnlyToken)) return send(fail(401, '401 Unauthorized'));
      const m = url.pathname.match(/^\/api\/v4\/projects\/([^/]+)(\/.*)?$/);
      const id = m ? decodeURIComponent(m[1]!) : undefined;
      if (!m || (id !== projectPath && id !== String(projectId))) return send(fail(404, '404 Project Not Found'));
      const answer = route(req.method!, m[2] ?? '', url.searchParams, body, token === opts.token);
      const lost = req.method !== 'GET' ? lostAnswers.shift() : undefined;
      send(lost ? fail(lost, `${lost} Bad Gateway`) : answer);
    });
  };

  const server = opts.tls ? https.createServer({ key: opts.tls.key, cert: opts.tls.cert }, handler) : http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `${opts.tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  externalUrl = url;
  seed();
  return {
    url,
    projectPath,
    requests,
    branches,
    mergeRequests,
    issues,
    notes,
    /** The next write requests are carried out, then answered with these statuses instead (in order). */
    loseNextAnswers(...statuses: number[]) {
      lostAnswers.push(...statuses);
    },
    /** Holds every answer back this long (0: answer at once). */
    setDelay(ms: number) {
      delayMs = ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export type LocalGitLab = Awaited<ReturnType<typeof startLocalGitLab>>;
