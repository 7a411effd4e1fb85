/**
 * Which address is the client's (TRUST_PROXY). By default the socket's peer, whatever a request's
 * headers say: anyone can send X-Forwarded-For, and limits keyed by address (sign-in starts) must not
 * be escaped with a new header per request. Behind proxies the operator names them, by hop count
 * (Koa's own `proxy` and `maxIpsCount`) or by address, where the header counts only from those peers.
 */
import type { Middleware } from 'koa';
import type { TrustProxy } from '../../shared/config.js';

/** Koa's options for a hop count (the header read, the last `hops` entries kept); off otherwise. */
export function koaProxyOptions(trust: TrustProxy, header: string): { proxy: boolean; proxyIpHeader?: string; maxIpsCount?: number } {
  return trust && 'hops' in trust ? { proxy: true, proxyIpHeader: header, maxIpsCount: trust.hops } : { proxy: false };
}

const family = (address: string) => (address.includes(':') ? 'ipv6' : 'ipv4');
/** ::ffff:10.0.0.2 (an IPv4 peer on a dual-stack socket) is 10.0.0.2. */
const plain = (address: string) => address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');

/**
 * With trusted proxy addresses: a request from one of them is from the right-most address of the
 * header that is not a trusted proxy (each proxy appends the peer it saw); from anyone else, the header is ignored.
 */
export function clientAddress(trust: TrustProxy, header: string): Middleware | undefined {
  if (!trust || !('proxies' in trust)) return undefined;
  const { proxies } = trust;
  const trusted = (address: string) => {
    try {
      return proxies.check(address, family(address));
    } catch {
      return false; // not an address at all: never a proxy of ours
    }
  };
  return async (ctx, next) => {
    let client = plain(ctx.socket.remoteAddress ?? '');
    const forwarded = ctx.get(header);
    if (forwarded && trusted(client)) {
      const hops = forwarded.split(',').map((a) => plain(a.trim()));
      for (let i = hops.length - 1; i >= 0 && trusted(client); i--) if (hops[i]) client = hops[i]!;
    }
    ctx.request.ip = client;
    await next();
  };
}
