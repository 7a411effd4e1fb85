/**
 * TRUST_PROXY: X-Forwarded-For counts only from proxies the operator names (by hop count or address);
 * by default the socket's peer is the client, so a limit keyed by address is not escaped with a new
 * header per request.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { loadConfig, trustProxyOf } from '../../shared/config.js';
import { clientAddress, forwardedHostTrusted, koaProxyOptions } from '../../api/middleware/client-address.js';

process.env.LIMIT_SIGNIN_STARTS_PER_MINUTE = '3';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
});

/** The address a Koa app configured with `trustProxy` takes as the client's, for a request with `forwarded`. */
async function seenAddress(trustProxy: string, forwarded?: string, header = 'X-Forwarded-For'): Promise<string> {
  const trust = trustProxyOf(trustProxy)!;
  const app = new Koa(koaProxyOptions(trust, header));
  const byAddress = clientAddress(trust, header);
  if (byAddress) app.use(byAddress);
  app.use((ctx) => void (ctx.body = ctx.ip));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { headers: forwarded ? { [header]: forwarded } : {} });
    return await res.text();
  } finally {
    server.close();
  }
}

describe('TRUST_PROXY', () => {
  it('off by default: sign-in starts are limited per connecting address, whatever X-Forwarded-For says', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await api.request('/api/global/auth/login', { auth: false, redirect: 'manual', headers: { 'X-Forwarded-For': `203.0.113.${i + 1}` } });
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(statuses.slice(0, 3)).not.toContain(429);
    expect(statuses[3]).toBe(429);
  });

  it('off: the peer is the client', async () => {
    expect(await seenAddress('', '198.51.100.7')).toBe('127.0.0.1');
    expect(await seenAddress('false', '198.51.100.7')).toBe('127.0.0.1');
  });

  it('a hop count: the Nth address from the right (what the last N proxies appended)', async () => {
    expect(await seenAddress('1', '198.51.100.7, 203.0.113.9')).toBe('203.0.113.9');
    expect(await seenAddress('2', '198.51.100.7, 203.0.113.9, 10.0.0.2')).toBe('203.0.113.9');
    expect(await seenAddress('1')).toBe('127.0.0.1');
  });

  it('addresses: the header counts only from a listed peer; the right-most unlisted address is the client', async () => {
    expect(await seenAddress('127.0.0.1', 'forged, 198.51.100.7, 203.0.113.9')).toBe('203.0.113.9');
    expect(await seenAddress('127.0.0.1,203.0.113.0/24', 'forged, 198.51.100.7, 203.0.113.9')).toBe('198.51.100.7');
    // A peer that is not a listed proxy: its header is ignored.
    expect(await seenAddress('10.0.0.2', '198.51.100.7')).toBe('127.0.0.1');
    expect(await seenAddress('127.0.0.0/8', '198.51.100.7', 'X-Real-Client')).toBe('198.51.100.7');
  });

  it('X-Forwarded-Proto and -Host (the URL a webhook signature covers) count only as the address does', async () => {
    const app = (trustProxy: string) => {
      const trust = trustProxyOf(trustProxy)!;
      const koa = new Koa(koaProxyOptions(trust, 'X-Forwarded-For'));
      const byAddress = clientAddress(trust, 'X-Forwarded-For');
      if (byAddress) koa.use(byAddress);
      koa.use((ctx) => void (ctx.body = `${ctx.protocol}://${ctx.host}`));
      return koa;
    };
    const seen = async (trustProxy: string) => {
      const server = app(trustProxy).listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      try {
        const { port } = server.address() as AddressInfo;
        return await (await fetch(`http://127.0.0.1:${port}/`, { headers: { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'hooks.example.com' } })).text();
      } finally {
        server.close();
      }
    };
    expect(await seen('')).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await seen('10.0.0.2')).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await seen('127.0.0.1')).toBe('https://hooks.example.com');
    expect(await seen('1')).toBe('https://hooks.example.com');
  });

  it('the voice relay (an upgrade Koa does not serve) reads X-Forwarded-Host / -Proto exactly when Koa would', () => {
    const trusted = (trustProxy: string, peer: string) => forwardedHostTrusted(trustProxyOf(trustProxy)!, peer);
    expect([trusted('', '127.0.0.1'), trusted('false', '10.0.0.2')]).toEqual([false, false]);
    expect(trusted('1', '198.51.100.7')).toBe(true);
    expect([trusted('10.0.0.0/8', '10.0.0.2'), trusted('10.0.0.0/8', '::ffff:10.0.0.2'), trusted('10.0.0.0/8', '198.51.100.7'), trusted('10.0.0.0/8', '')]).toEqual([true, true, false, false]);
  });

  it('a malformed setting is refused at start, naming the variable', () => {
    for (const bad of ['banana', '10.0.0.1/33', '10.0.0.1,', 'fe80::1/129']) {
      expect(() => loadConfig({ ...process.env, TRUST_PROXY: bad }, { credentials: false })).toThrow(/TRUST_PROXY/);
    }
    expect(loadConfig({ ...process.env, TRUST_PROXY: '10.0.0.0/8, fd00::/8' }, { credentials: false }).http.trustProxy).toBeDefined();
  });
});
