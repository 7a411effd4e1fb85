/**
 * The web role serving the built app (npm start): deep links answer index.html behind the page
 * guard, assets are immutable, and the API, the docs and the queue dashboard keep their own answers.
 * (Vite middleware mode is what the browser tests run on.)
 */
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { signIn, startIdentity } from '../helpers/identity.js';

const dir = await mkdtemp(path.join(os.tmpdir(), 'sb-web-'));
await mkdir(path.join(dir, 'assets'));
await writeFile(path.join(dir, 'index.html'), '<!doctype html><title>built switchboard app</title><script type="module" src="/assets/app-1a2b.js"></script>');
await writeFile(path.join(dir, 'assets/app-1a2b.js'), 'console.log("app")');

const idp = await startIdentity();
process.env.API_KEYS ??= 'test-key';
const { startServer } = await import('../../api/server.js');
const { url } = await startServer(idp.appPort, '127.0.0.1', [], { web: 'built', webDir: dir });
const sre = await signIn(url, 'sre');
const user = await signIn(url, 'user');
const anonymous = (p: string, init?: RequestInit) => fetch(url + p, { redirect: 'manual', ...init });

describe('built app', () => {
  it('answers deep links with index.html for the role that may see them', async () => {
    const deep = '/admin/incidents/7d0c5b5e-8a49-4a4e-9d7e-2f3c1b0a9e11?tab=timeline';
    const page = await sre.request(deep);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(await page.text()).toContain('built switchboard app');
    for (const p of ['/', '/portal', '/cases/42', '/profile']) {
      const res = await user.request(p);
      expect(res.status, p).toBe(200);
      expect(await res.text()).toContain('built switchboard app');
    }
  });

  it('sends a visitor without a session to sign-in, and refuses the console to a portal user', async () => {
    const anon = await anonymous('/admin/alerts?status=firing');
    expect(anon.status).toBe(302);
    expect(anon.headers.get('location')).toBe(`/api/global/auth/login?return_to=${encodeURIComponent('/admin/alerts?status=firing')}`);
    const refused = await user.request('/admin/alerts');
    expect(refused.status).toBe(403);
    expect(await refused.text()).not.toContain('built switchboard app');
  });

  it('serves assets immutable and leaves the API, the docs and the queue dashboard alone', async () => {
    const asset = await anonymous('/assets/app-1a2b.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect(await asset.text()).toBe('console.log("app")');
    expect((await anonymous('/assets/missing.js')).status).toBe(404);
    // With sign-in configured the queue dashboard takes the console's session (sre), not basic auth.
    expect((await sre.request('/admin/queues')).status).toBe(200);
    expect((await user.request('/admin/queues')).status).toBe(403);
    expect((await anonymous('/admin/queues')).status).toBe(302);
    const api = await sre.request('/api/v1/nothing-here');
    expect(api.status).toBe(404);
    expect(api.headers.get('content-type')).toMatch(/problem\+json/);
    expect((await anonymous('/api/docs')).headers.get('content-type')).toMatch(/text\/html/);
    expect(await (await anonymous('/api/docs')).text()).not.toContain('built switchboard app');
  });
});
