/**
 * A tracker issue is created once even when GitLab's answer is lost: the local
 * GitLab creates the issue and then answers 502, as a proxy does when GitLab was slow. The client does
 * not repeat the POST by itself (gitbeaker would, up to 10 times); the job's retry looks the issue up
 * by the incident's marker and links it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { startLocalGitLab } from '../helpers/local-gitlab-server.js';
import { eventually } from '../helpers/eventually.js';
import { GitLabClient, repeatable } from '../../shared/clients/gitlab.js';

const token = 'glpat-test-retries';
const gitlab = await startLocalGitLab({ token });
afterAll(() => gitlab.close());
process.env.ISSUE_TRACKER_URL = gitlab.url;
process.env.ISSUE_TRACKER_TOKEN = token;
process.env.ISSUE_TRACKER_PROJECT_ID = '42';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform();
});

const issuePosts = () => gitlab.requests.filter((r) => r.method === 'POST' && r.path === '/api/v4/projects/42/issues');

describe('tracker issues and lost answers', () => {
  it('an issue created although GitLab answered 502 is found by the retried job and linked: one issue, one POST', async () => {
    gitlab.loseNextAnswers(502);
    const postsBefore = issuePosts().length;
    const created = await (await api.request('/api/v1/incidents', { method: 'POST', json: { title: 'Payments 502' } })).json();
    const linked = await eventually(async () => {
      const i = await (await api.request(`/api/v1/incidents/${created.id}`)).json();
      return i.issue.iid ? i : null;
    }, 15_000, 'the incident to be linked to its issue');
    const mine = gitlab.issues.filter((i) => String(i.description).includes(created.id));
    expect(mine).toHaveLength(1);
    expect(linked.issue).toMatchObject({ iid: mine[0]!.iid, web_url: mine[0]!.web_url });
    expect(issuePosts().length - postsBefore).toBe(1);
  });

  it('the client repeats a request on 502 only when repeating changes nothing; 429 always', async () => {
    expect(['GET', 'PUT', 'DELETE'].map((m) => repeatable(m, 502))).toEqual([true, true, true]);
    expect(['POST', 'PATCH'].map((m) => repeatable(m, 502))).toEqual([false, false]);
    expect(['POST', 'GET'].map((m) => repeatable(m, 429))).toEqual([true, true]);
    // A comment answered 502 is not posted twice by the client.
    const client = new GitLabClient({ url: gitlab.url, token, projectId: '42' });
    const issue = await client.createIssue({ title: 'notes once' });
    gitlab.loseNextAnswers(502);
    await expect(client.addNote('42', issue.iid, 'only once')).rejects.toMatchObject({ status: 502 });
    expect(gitlab.notes.get(`issue:${issue.iid}`)?.filter((n) => n.body === 'only once')).toHaveLength(1);
  });
});
