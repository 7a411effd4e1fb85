/**
 * Which address is the client's (TRUST_PROXY). By default the socket's peer, whatever a request's
 * headers say: anyone can send X-Forwarded-For, and limits keyed by address (sign-in starts) must not
 * be escaped with a new header per request. Behind proxies the operator names them, by hop count
 * (Koa's own `proxy` and `maxIpsCount`) or by address, where the header counts only from those peers.
 */
import type { BlockList } from 'node:net';
import type { Middleware } from 'koa';
import type { TrustProxy } from '../../shared/config.js';

/**
 * Koa's options: off, Koa reads no forwarded header; a hop count, the header read and its last `hops`
 * entries kept; addresses, forwarded headers are read (X-Forwarded-Proto and -Host too) but clientAddress
 * drops them from any other peer first.
 */
export function koaProxyOptions(trust: TrustProxy, header: string): { proxy: boolean; proxyIpHeader?: string; maxIpsCount?: number } {
  if (!trust) return { proxy: false };
  return 'hops' in trust ? { proxy: true, proxyIpHeader: header, maxIpsCount: trust.hops } : { proxy: true, proxyIpHeader: header };
}

const forwardedHeaders = ['x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-for', 'forwarded'];

const family = (address: string) => (address.includes(':') ? 'ipv6' : 'ipv4');
/** ::ffff:10.0.0.2 (an IPv4 peer on a dual-stack socket) is 10.0.0.2. */
const plain = (address: string) => address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');

/** Whether an address is one of the listed proxies (anything that is not an address never is). */
function isListedProxy(proxies: BlockList, address: string): boolean {
  try {
    return proxies.check(address, family(address));
  } catch {
    return false;
  }
}

/**
 * Whether X-Forwarded-Proto and -Host from `peer` may name the scheme and host, as Koa and
 * clientAddress read them: never when TRUST_PROXY is off, from any peer with a hop count, only from a
 * listed proxy with addresses. For what Koa does not serve (the voice relay's WebSocket upgrade).
 */
export function forwardedHostTrusted(trust: TrustProxy, peer: string): boolean {
  if (!trust) return false;
  return 'hops' in trust || isListedProxy(trust.proxies, plain(peer));
}

/**
 * With trusted proxy addresses: a request from one of them is from the right-most address of the
 * header that is not a trusted proxy (each proxy appends the peer it saw); from anyone else, the
 * forwarded headers are removed before anything reads them (the scheme and host a signature covers too).
 */
export function clientAddress(trust: TrustProxy, header: string): Middleware | undefined {
  if (!trust || !('proxies' in trust)) return undefined;
  const { proxies } = trust;
  const trusted = (address: string) => isListedProxy(proxies, address);
  const dropped = [...forwardedHeaders, header.toLowerCase()];
  return async (ctx, next) => {
    let client = plain(ctx.socket.remoteAddress ?? '');
    if (trusted(client)) {
      const hops = ctx.get(header).split(',').map((a) => plain(a.trim()));
      for (let i = hops.length - 1; i >= 0 && trusted(client); i--) if (hops[i]) client = hops[i]!;
    } else {
      for (const name of dropped) delete ctx.req.headers[name];
    }
    ctx.request.ip = client;
    await next();
  };
}
