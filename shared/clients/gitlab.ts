/**
 * GitLab REST API v4 (issues only), over fetch: POST /projects/:id/issues with the PRIVATE-TOKEN header.
 * https://docs.gitlab.com/api/issues/#new-issue
 */
import { config } from '../config.js';
import { ExternalHttpError, requestText } from './http.js';

export interface GitLabIssue {
  id: number;
  iid: number;
  project_id: number;
  title: string;
  web_url: string;
  state?: string;
}

export interface GitLabOptions {
  url: string;
  token: string;
  projectId: string;
  timeoutMs?: number;
}

export class GitLabClient {
  constructor(private readonly opts: GitLabOptions) {}

  /**
   * The newest issue of the project whose description contains `text` (GET /projects/:id/issues
   * with search and in=description), or null: how a retry finds out whether an earlier attempt
   * created the issue although its answer was lost.
   */
  async findIssueByDescription(text: string): Promise<GitLabIssue | null> {
    const url = new URL(`${this.opts.url.replace(/\/+$/, '')}/api/v4/projects/${encodeURIComponent(this.opts.projectId)}/issues`);
    url.search = new URLSearchParams({ search: text, in: 'description', order_by: 'created_at', sort: 'desc', per_page: '1' }).toString();
    const { status, text: body } = await requestText('GitLab', url.toString(), {
      method: 'GET',
      headers: { 'PRIVATE-TOKEN': this.opts.token, Accept: 'application/json' },
      timeoutMs: this.opts.timeoutMs ?? 10_000,
    });
    let issues: unknown;
    try {
      issues = JSON.parse(body);
    } catch {
      throw new ExternalHttpError(`GitLab answered ${status} with a body that is not JSON`, status);
    }
    if (!Array.isArray(issues)) throw new ExternalHttpError('GitLab answered the issue search without a list', status);
    const found = issues.find((i: Partial<GitLabIssue> & { description?: string }) => typeof i.iid === 'number' && typeof i.web_url === 'string' && (i.description ?? '').includes(text));
    return (found as GitLabIssue | undefined) ?? null;
  }

  /** Creates an issue in the configured project. */
  async createIssue(input: { title: string; description?: string; labels?: string[]; confidential?: boolean }): Promise<GitLabIssue> {
    const url = `${this.opts.url.replace(/\/+$/, '')}/api/v4/projects/${encodeURIComponent(this.opts.projectId)}/issues`;
    const { status, text } = await requestText('GitLab', url, {
      method: 'POST',
      headers: { 'PRIVATE-TOKEN': this.opts.token, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ title: input.title, description: input.description, labels: input.labels?.join(','), confidential: input.confidential }),
      timeoutMs: this.opts.timeoutMs ?? 10_000,
    });
    let body: Partial<GitLabIssue>;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ExternalHttpError(`GitLab answered ${status} with a body that is not JSON`, status);
    }
    if (typeof body.iid !== 'number' || typeof body.web_url !== 'string') throw new ExternalHttpError('GitLab answered without iid/web_url', status);
    return body as GitLabIssue;
  }
}

/** The issue-tracker client from ISSUE_TRACKER_*; null when the tracker is not configured. */
export function issueTracker(): GitLabClient | null {
  const { url, token, projectId } = config().sre.issueTracker;
  return url && token && projectId ? new GitLabClient({ url, token, projectId }) : null;
}
