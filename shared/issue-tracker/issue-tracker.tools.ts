/**
 * The issue-tracker tool server's tools (executor issue_tracker): repository browsing, file read and
 * write, merge requests, issues and pipelines of one GitLab project. Results are compact projections
 * of GitLab's answers with links on the tracker's public address (ISSUE_TRACKER_BASE_URL).
 */
import { z } from '../zod.js';
import { defineTool } from '../tools.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { call, tracker } from './tracker.js';

type Row = Record<string, any>;

const iid = z.number().int().min(1).describe('the project-scoped number (iid) shown as !N for merge requests, #N for issues');
const page = z.number().int().min(1).max(1000).default(1).describe('page number, from 1');
const perPage = z.number().int().min(1).max(100).default(20).describe('items per page, at most 100');
const labels = z.array(z.string().min(1).max(255)).max(50);
/** Longest file text handed back; a model reads the rest with a narrower request or not at all. */
const maxFileChars = 100_000;
/** Most tree entries scanned by a path search (100 per page). */
const maxSearchPages = 20;

/** A file path inside the repository: relative, without `.`/`..` segments or backslashes (GitLab would resolve them elsewhere). */
const repoPath = () =>
  z
    .string()
    .max(1000)
    .refine((p) => !p.startsWith('/') && !p.includes('\\') && !p.split('/').some((seg) => seg === '..' || seg === '.'), 'must be a relative path inside the repository (no leading /, no . or .. segments)');

/**
 * The branch a ref names as GitLab resolves it (`refs/heads/main`, `heads/main` → `main`): the existing
 * branch's own name when there is one, else the name with those prefixes taken off.
 */
async function resolvedBranch(ref: string): Promise<string> {
  const t = tracker();
  const found = await call(`Reading branch ${ref}`, () => t.api.Branches.show(t.project, ref)).then(
    (b) => String((b as Row).name),
    (err) => (err instanceof NotFoundError ? undefined : Promise.reject(err)),
  );
  return found ?? ref.replace(/^(refs\/)?heads\//, '');
}

async function defaultBranch(): Promise<string> {
  const t = tracker();
  const project = (await call('Reading the project', () => t.api.Projects.show(t.project))) as Row;
  return String(project.default_branch ?? 'main');
}

/** true when the read succeeds, false when the tracker says 404; other failures propagate. */
function exists(read: Promise<unknown>): Promise<boolean> {
  return read.then(
    () => true,
    (err) => (err instanceof NotFoundError ? false : Promise.reject(err)),
  );
}

function user(u: Row | null | undefined): string | null {
  return u?.username ?? null;
}

function issueView(i: Row) {
  const t = tracker();
  return {
    iid: i.iid, title: i.title, state: i.state, labels: i.labels ?? [], author: user(i.author), assignees: (i.assignees ?? []).map(user),
    created_at: i.created_at, updated_at: i.updated_at, closed_at: i.closed_at ?? null, link: t.link(`-/issues/${i.iid}`),
  };
}

function mergeRequestView(m: Row) {
  const t = tracker();
  return {
    iid: m.iid, title: m.title, state: m.state, draft: Boolean(m.draft ?? m.work_in_progress), source_branch: m.source_branch, target_branch: m.target_branch,
    author: user(m.author), merge_status: m.detailed_merge_status ?? m.merge_status ?? null, sha: m.sha ?? null,
    created_at: m.created_at, updated_at: m.updated_at, merged_at: m.merged_at ?? null, link: t.link(`-/merge_requests/${m.iid}`),
  };
}

function pipelineView(p: Row) {
  const t = tracker();
  return { id: p.id, status: p.status, ref: p.ref, sha: p.sha, source: p.source ?? null, created_at: p.created_at, updated_at: p.updated_at, finished_at: p.finished_at ?? null, duration: p.duration ?? null, link: t.link(`-/pipelines/${p.id}`) };
}

function noteView(n: Row) {
  return { id: n.id, author: user(n.author), body: n.body, created_at: n.created_at };
}

/** Added and removed lines of a unified diff (its hunk lines only). */
function lineCounts(diff: string): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  for (const line of diff.split('\n')) {
    if (line.startsWith('+') && !line.startsWith('+++')) additions++;
    else if (line.startsWith('-') && !line.startsWith('---')) deletions++;
  }
  return { additions, deletions };
}

export const issueTrackerTools = [
  defineTool({
    name: 'tracker_list_tree',
    executor: 'issue_tracker',
    changesData: false,
    description: 'List the files and folders of the project repository at a path and ref (branch, tag or commit; default: the default branch).',
    input: z.object({ path: repoPath().optional(), ref: z.string().max(255).optional(), recursive: z.boolean().default(false), page, per_page: perPage }),
    handler: async (input) => {
      const t = tracker();
      const ref = input.ref ?? (await defaultBranch());
      const entries = (await call(`Listing ${input.path || '/'} at ${ref}`, () =>
        t.api.Repositories.allRepositoryTrees(t.project, { path: input.path, ref, recursive: input.recursive, page: input.page, perPage: input.per_page } as never),
      )) as Row[];
      return { ref, path: input.path ?? '', entries: entries.map((e) => ({ path: e.path, type: e.type })), more: entries.length === input.per_page };
    },
  }),
  defineTool({
    name: 'tracker_search_files',
    executor: 'issue_tracker',
    changesData: false,
    description: 'Find files of the repository whose path contains the given text (case-insensitive) at a ref (default: the default branch).',
    input: z.object({ query: z.string().min(1).max(255), ref: z.string().max(255).optional(), limit: z.number().int().min(1).max(200).default(50) }),
    handler: async (input) => {
      const t = tracker();
      const ref = input.ref ?? (await defaultBranch());
      const needle = input.query.toLowerCase();
      const matches: string[] = [];
      let scanned = 0;
      for (let p = 1; p <= maxSearchPages && matches.length < input.limit; p++) {
        const entries = (await call(`Searching files at ${ref}`, () =>
          t.api.Repositories.allRepositoryTrees(t.project, { ref, recursive: true, page: p, perPage: 100 } as never),
        )) as Row[];
        scanned += entries.length;
        for (const e of entries) if (e.type === 'blob' && String(e.path).toLowerCase().includes(needle)) matches.push(e.path);
        if (entries.length < 100) break;
      }
      return { ref, query: input.query, files: matches.slice(0, input.limit).map((path) => ({ path, link: t.link(`-/blob/${ref}/${path}`) })), scanned };
    },
  }),
  defineTool({
    name: 'tracker_read_file',
    executor: 'issue_tracker',
    changesData: false,
    description: 'Read a text file of the repository at a ref (default: the default branch). Binary files are reported, not returned.',
    input: z.object({ path: repoPath().pipe(z.string().min(1)), ref: z.string().max(255).optional() }),
    handler: async (input) => {
      const t = tracker();
      const ref = input.ref ?? (await defaultBranch());
      const file = (await call(`Reading ${input.path} at ${ref}`, () => t.api.RepositoryFiles.show(t.project, input.path, ref))) as Row;
      const bytes = Buffer.from(String(file.content ?? ''), file.encoding === 'base64' ? 'base64' : 'utf8');
      const binary = bytes.includes(0);
      const text = binary ? null : bytes.toString('utf8');
      return {
        path: file.file_path, ref, size: file.size ?? bytes.length, last_commit_id: file.last_commit_id ?? null, binary,
        content: text === null ? null : text.slice(0, maxFileChars), truncated: text !== null && text.length > maxFileChars,
        link: t.link(`-/blob/${ref}/${input.path}`),
      };
    },
  }),
  defineTool({
    name: 'tracker_write_file',
    executor: 'issue_tracker',
    changesData: true,
    description: [
      'Create or replace a text file as one commit on a branch. A branch that does not exist yet is created from start_branch',
      '(default: the default branch). Writing to the default branch itself is refused unless allow_default_branch is true.',
    ].join(' '),
    input: z.object({
      path: repoPath().pipe(z.string().min(1)),
      content: z.string().max(1_000_000),
      branch: z.string().min(1).max(255),
      commit_message: z.string().min(1).max(10_000),
      start_branch: z.string().min(1).max(255).optional(),
      allow_default_branch: z.boolean().default(false),
    }),
    handler: async (input) => {
      const t = tracker();
      const main = await defaultBranch();
      // Compared as GitLab resolves the name, so refs/heads/main is the default branch too.
      if ((await resolvedBranch(input.branch)) === main && !input.allow_default_branch) {
        throw new ValidationError(`Refusing to commit to the default branch ${main}: write to a feature branch and open a merge request, or pass allow_default_branch: true.`, [
          { path: 'input.branch', message: `is the default branch (${main}); allow_default_branch is false` },
        ]);
      }
      const branchExists = await exists(call(`Reading branch ${input.branch}`, () => t.api.Branches.show(t.project, input.branch)));
      const base = branchExists ? input.branch : (input.start_branch ?? main);
      const fileExists = await exists(call(`Reading ${input.path} at ${base}`, () => t.api.RepositoryFiles.show(t.project, input.path, base)));
      const action = fileExists ? 'update' : 'create';
      const commit = (await call(`Committing ${input.path} to ${input.branch}`, () =>
        t.api.Commits.create(t.project, input.branch, input.commit_message, [{ action, filePath: input.path, content: input.content }], branchExists ? {} : { startBranch: base }),
      )) as Row;
      return {
        branch: input.branch, created_branch: !branchExists, action, path: input.path,
        commit: { id: commit.id, short_id: commit.short_id, title: commit.title, link: t.link(`-/commit/${commit.id}`) },
        link: t.link(`-/blob/${input.branch}/${input.path}`),
      };
    },
  }),
  defineTool({
    name: 'tracker_list_merge_requests',
    executor: 'issue_tracker',
    changesData: false,
    description: 'List merge requests of the project, newest first; filter by state (default opened), branches or a text search.',
    input: z.object({
      state: z.enum(['opened', 'closed', 'merged', 'all']).default('opened'),
      source_branch: z.string().max(255).optional(),
      target_branch: z.string().max(255).optional(),
      search: z.string().max(255).optional(),
      page,
      per_page: perPage,
    }),
    handler: async (input) => {
      const t = tracker();
      const rows = (await call('Listing merge requests', () =>
        t.api.MergeRequests.all({
          projectId: t.project, state: input.state === 'all' ? undefined : input.state, sourceBranch: input.source_branch, targetBranch: input.target_branch,
          search: input.search, page: input.page, perPage: input.per_page,
        } as never),
      )) as Row[];
      return { merge_requests: rows.map(mergeRequestView), more: rows.length === input.per_page };
    },
  }),
  defineTool({
    name: 'tracker_get_merge_request',
    executor: 'issue_tracker',
    changesData: false,
    description: 'Read one merge request with its description and a diff summary (files changed, lines added and removed).',
    input: z.object({ iid }),
    handler: async (input) => {
      const t = tracker();
      const mr = (await call(`Reading merge request !${input.iid}`, () => t.api.MergeRequests.show(t.project, input.iid))) as Row;
      const diffs = (await call(`Reading the diff of merge request !${input.iid}`, () =>
        t.api.MergeRequests.allDiffs(t.project, input.iid, { page: 1, perPage: 100 } as never),
      )) as Row[];
      const files = diffs.map((d) => ({
        old_path: d.old_path, new_path: d.new_path, new_file: Boolean(d.new_file), deleted_file: Boolean(d.deleted_file), renamed_file: Boolean(d.renamed_file),
        ...lineCounts(String(d.diff ?? '')),
      }));
      return {
        ...mergeRequestView(mr), description: mr.description ?? '',
        diff_summary: { files_changed: files.length, additions: files.reduce((s, f) => s + f.additions, 0), deletions: files.reduce((s, f) => s + f.deletions, 0), files },
      };
    },
  }),
  defineTool({
    name: 'tracker_create_merge_request',
    executor: 'issue_tracker',
    changesData: true,
    description: 'Open a merge request from a source branch into a target branch (default: the default branch).',
    input: z.object({
      source_branch: z.string().min(1).max(255),
      target_branch: z.string().min(1).max(255).optional(),
      title: z.string().min(1).max(255),
      description: z.string().max(100_000).optional(),
      labels: labels.optional(),
      remove_source_branch: z.boolean().optional(),
    }),
    handler: async (input) => {
      const t = tracker();
      const target = input.target_branch ?? (await defaultBranch());
      const mr = (await call(`Opening a merge request from ${input.source_branch} into ${target}`, () =>
        t.api.MergeRequests.create(t.project, input.source_branch, target, input.title, {
          description: input.description, labels: input.labels?.join(','), removeSourceBranch: input.remove_source_branch,
        } as never),
      )) as Row;
      return mergeRequestView(mr);
    },
  }),
  defineTool({
    name: 'tracker_comment_merge_request',
    executor: 'issue_tracker',
    changesData: true,
    description: 'Add a comment to a merge request.',
    input: z.object({ iid, body: z.string().min(1).max(100_000) }),
    handler: async (input) => {
      const t = tracker();
      const note = (await call(`Commenting on merge request !${input.iid}`, () => t.api.MergeRequestNotes.create(t.project, input.iid, input.body))) as Row;
      return { ...noteView(note), link: t.link(`-/merge_requests/${input.iid}#note_${note.id}`) };
    },
  }),
  defineTool({
    name: 'tracker_update_merge_request',
    executor: 'issue_tracker',
    changesData: true,
    description: 'Change a merge request: its state (close, reopen, or merge when the tracker allows it) and/or its title, description and labels.',
    input: z
      .object({
        iid,
        state_event: z.enum(['close', 'reopen', 'merge']).optional(),
        title: z.string().min(1).max(255).optional(),
        description: z.string().max(100_000).optional(),
        labels: labels.optional(),
      })
      .refine((v) => v.state_event || v.title !== undefined || v.description !== undefined || v.labels, { message: 'give state_event, title, description or labels', path: ['state_event'] }),
    handler: async (input) => {
      const t = tracker();
      const what = `Updating merge request !${input.iid}`;
      const { iid: number, state_event: event, title, description, labels: names } = input;
      let mr: Row | undefined;
      if (title !== undefined || description !== undefined || names || (event && event !== 'merge')) {
        mr = (await call(what, () =>
          t.api.MergeRequests.edit(t.project, number, { title, description, labels: names?.join(','), stateEvent: event === 'merge' ? undefined : event } as never),
        )) as Row;
      }
      if (event === 'merge') mr = (await call(`Merging merge request !${number}`, () => t.api.MergeRequests.merge(t.project, number))) as Row;
      return mergeRequestView(mr!);
    },
  }),
  defineTool({
    name: 'tracker_list_issues',
    executor: 'issue_tracker',
    changesData: false,
    description: 'List issues of the project, newest first; filter by state (default opened), labels (all must match) or a text search.',
    input: z.object({ state: z.enum(['opened', 'closed', 'all']).default('opened'), labels: labels.optional(), search: z.string().max(255).optional(), page, per_page: perPage }),
    handler: async (input) => {
      const t = tracker();
      const rows = (await call('Listing issues', () =>
        t.api.Issues.all({
          projectId: t.project, state: input.state === 'all' ? undefined : input.state, labels: input.labels?.join(','), search: input.search, page: input.page, perPage: input.per_page,
        } as never),
      )) as Row[];
      return { issues: rows.map(issueView), more: rows.length === input.per_page };
    },
  }),
  defineTool({
    name: 'tracker_get_issue',
    executor: 'issue_tracker',
    changesData: false,
    description: 'Read one issue with its description and its latest comments (system notes left out).',
    input: z.object({ iid }),
    handler: async (input) => {
      const t = tracker();
      const issue = (await call(`Reading issue #${input.iid}`, () => t.api.Issues.show(input.iid, { projectId: t.project }))) as Row;
      const notes = (await call(`Reading the comments of issue #${input.iid}`, () =>
        t.api.IssueNotes.all(t.project, input.iid, { sort: 'desc', orderBy: 'created_at', page: 1, perPage: 20 } as never),
      )) as Row[];
      return { ...issueView(issue), description: issue.description ?? '', comments: notes.filter((n) => !n.system).reverse().map(noteView) };
    },
  }),
  defineTool({
    name: 'tracker_create_issue',
    executor: 'issue_tracker',
    changesData: true,
    description: 'Create an issue in the project.',
    input: z.object({ title: z.string().min(1).max(255), description: z.string().max(100_000).optional(), labels: labels.optional(), confidential: z.boolean().optional() }),
    handler: async (input) => {
      const t = tracker();
      const issue = (await call('Creating an issue', () =>
        t.api.Issues.create(t.project, input.title, { description: input.description, labels: input.labels?.join(','), confidential: input.confidential } as never),
      )) as Row;
      return issueView(issue);
    },
  }),
  defineTool({
    name: 'tracker_update_issue',
    executor: 'issue_tracker',
    changesData: true,
    description: 'Change an issue: title, description, labels (replace, add or remove) and/or state (close or reopen).',
    input: z
      .object({
        iid,
        title: z.string().min(1).max(255).optional(),
        description: z.string().max(100_000).optional(),
        labels: labels.optional(),
        add_labels: labels.optional(),
        remove_labels: labels.optional(),
        state_event: z.enum(['close', 'reopen']).optional(),
      })
      .refine((v) => Object.keys(v).some((k) => k !== 'iid' && v[k as keyof typeof v] !== undefined), { message: 'give at least one field to change', path: ['iid'] }),
    handler: async (input) => {
      const t = tracker();
      const issue = (await call(`Updating issue #${input.iid}`, () =>
        t.api.Issues.edit(t.project, input.iid, {
          title: input.title, description: input.description, labels: input.labels?.join(','), addLabels: input.add_labels?.join(','),
          removeLabels: input.remove_labels?.join(','), stateEvent: input.state_event,
        } as never),
      )) as Row;
      return issueView(issue);
    },
  }),
  defineTool({
    name: 'tracker_comment_issue',
    executor: 'issue_tracker',
    changesData: true,
    description: 'Add a comment to an issue.',
    input: z.object({ iid, body: z.string().min(1).max(100_000) }),
    handler: async (input) => {
      const t = tracker();
      const note = (await call(`Commenting on issue #${input.iid}`, () => t.api.IssueNotes.create(t.project, input.iid, input.body))) as Row;
      return { ...noteView(note), link: t.link(`-/issues/${input.iid}#note_${note.id}`) };
    },
  }),
  defineTool({
    name: 'tracker_latest_pipeline',
    executor: 'issue_tracker',
    changesData: false,
    description: 'Status of the latest CI pipeline of a ref (branch or tag; default: the default branch).',
    input: z.object({ ref: z.string().min(1).max(255).optional() }),
    handler: async (input) => {
      const t = tracker();
      const ref = input.ref ?? (await defaultBranch());
      const pipeline = (await call(`Reading the latest pipeline of ${ref}`, () => t.api.Pipelines.showLatest(t.project, { ref }))) as Row;
      return pipelineView(pipeline);
    },
  }),
  defineTool({
    name: 'tracker_get_pipeline',
    executor: 'issue_tracker',
    changesData: false,
    description: 'One CI pipeline with its jobs (name, stage, status, duration, link).',
    input: z.object({ pipeline_id: z.number().int().min(1) }),
    handler: async (input) => {
      const t = tracker();
      const pipeline = (await call(`Reading pipeline ${input.pipeline_id}`, () => t.api.Pipelines.show(t.project, input.pipeline_id))) as Row;
      const jobs = (await call(`Reading the jobs of pipeline ${input.pipeline_id}`, () =>
        t.api.Jobs.all(t.project, { pipelineId: input.pipeline_id, page: 1, perPage: 100 } as never),
      )) as Row[];
      return {
        ...pipelineView(pipeline),
        jobs: jobs.map((j) => ({ id: j.id, name: j.name, stage: j.stage, status: j.status, duration: j.duration ?? null, allow_failure: Boolean(j.allow_failure), link: t.link(`-/jobs/${j.id}`) })),
      };
    },
  }),
];
