/**
 * GitLab REST API v4 (issues only), over fetch, with the PRIVATE-TOKEN header: POST /projects/:id/issues,
 * POST /projects/:id/issues/:iid/notes, PUT /projects/:id/issues/:iid (state_event close|reopen).
 * https://docs.gitlab.com/api/issues/ · https://docs.gitlab.com/api/notes/#create-new-issue-note
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

  private projectUrl(projectId = this.opts.projectId): string {
    return `${this.opts.url.replace(/\/+$/, '')}/api/v4/projects/${encodeURIComponent(projectId)}`;
  }

  /** A JSON request; an answer that is not JSON or lacks `required` fields is an ExternalHttpError. */
  private async send<T>(method: string, url: string, body: unknown, required: string[]): Promise<T> {
    const { status, text } = await requestText('GitLab', url, {
      method,
      headers: { 'PRIVATE-TOKEN': this.opts.token, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(body),
      timeoutMs: this.opts.timeoutMs ?? 10_000,
    });
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ExternalHttpError(`GitLab answered ${status} with a body that is not JSON`, status);
    }
    const missing = required.filter((f) => parsed[f] === undefined);
    if (missing.length) throw new ExternalHttpError(`GitLab answered without ${missing.join('/')}`, status);
    return parsed as T;
  }

  /** Creates an issue in the configured project. */
  async createIssue(input: { title: string; description?: string; labels?: string[]; confidential?: boolean }): Promise<GitLabIssue> {
    const issue = await this.send<GitLabIssue>('POST', `${this.projectUrl()}/issues`, { title: input.title, description: input.description, labels: input.labels?.join(','), confidential: input.confidential }, ['iid', 'web_url']);
    if (typeof issue.iid !== 'number' || typeof issue.web_url !== 'string') throw new ExternalHttpError('GitLab answered without iid/web_url');
    return issue;
  }

  /** Adds a comment (note) to an issue. */
  async addNote(projectId: string, iid: number, body: string): Promise<{ id: number }> {
    return this.send('POST', `${this.projectUrl(projectId)}/issues/${iid}/notes`, { body }, ['id']);
  }

  /** Closes or reopens an issue; answers its new state. */
  async setIssueState(projectId: string, iid: number, event: 'close' | 'reopen'): Promise<GitLabIssue> {
    return this.send('PUT', `${this.projectUrl(projectId)}/issues/${iid}`, { state_event: event }, ['iid', 'state']);
  }
}

/** The issue-tracker client from ISSUE_TRACKER_*; null when the tracker is not configured. */
export function issueTracker(): GitLabClient | null {
  const { url, token, projectId } = config().sre.issueTracker;
  return url && token && projectId ? new GitLabClient({ url, token, projectId }) : null;
}
