/**
 * Which addresses a discovery source set through the API may have. Discovery connects wherever its
 * sources point (with the server's network position), so an API caller could otherwise make the
 * server read from any internal service or local socket. Unix sockets and private, loopback or
 * link-local hosts are therefore allowed only when configuration names them: as a configured source
 * (CONTAINER_RUNTIME_HOST, METRICS_URL, PROXY_API_URL) or in DISCOVERY_ALLOWED_TARGETS.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { config } from '../../config.js';
import { ValidationError } from '../../errors.js';
import type { SourceKind } from '../cmdb/cmdb.schemas.js';
import type { AddressCheck } from '../../clients/http.js';

const internal = new BlockList();
for (const [net, bits] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4]] as const) {
  internal.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) internal.addSubnet(net, bits, 'ipv6');

/** Whether an IP address is loopback, private, link-local or otherwise not a public host (IPv4-mapped IPv6 included). */
export function isInternalAddress(ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  if (mapped) return internal.check(mapped, 'ipv4');
  const family = isIP(ip);
  if (!family) return true;
  return internal.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

const protocols: Record<SourceKind, string[]> = { docker: ['tcp:', 'http:', 'https:'], prometheus: ['http:', 'https:'], traefik: ['http:', 'https:'] };

/** DISCOVERY_ALLOWED_TARGETS: hosts, host:port pairs and unix socket paths the API may point sources at. */
function allowList(): Set<string> {
  return new Set(config().sre.discovery.allowedTargets.map((t) => t.toLowerCase()));
}

/**
 * Why a source of `kind` may not be pointed at `address` through the API, or undefined when it may.
 * A host name is resolved and refused when any of its addresses is internal (checked again before each read).
 */
export async function discoveryTargetProblem(kind: SourceKind, address: string): Promise<string | undefined> {
  if (configuredAddresses().has(address)) return undefined;
  const allowed = allowList();
  const socketPath = address.startsWith('unix://') ? address.slice('unix://'.length) : address.startsWith('/') ? address : undefined;
  if (socketPath !== undefined) {
    if (kind === 'docker' && allowed.has(socketPath.toLowerCase())) return undefined;
    return 'a unix socket may only be set in configuration (CONTAINER_RUNTIME_HOST or DISCOVERY_ALLOWED_TARGETS)';
  }
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return 'must be a URL (tcp://host:port for docker; http(s)://… otherwise)';
  }
  if (!protocols[kind].includes(url.protocol)) return `must use ${protocols[kind].join(' or ')}`;
  if (url.username || url.password) return 'must not carry credentials';
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (allowed.has(host) || allowed.has(`${host}:${url.port}`)) return undefined;
  let ips: string[];
  try {
    ips = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    return `host ${host} cannot be resolved`;
  }
  if (ips.some(isInternalAddress)) return `host ${host} is a private or loopback address; such targets may only be set in configuration (DISCOVERY_ALLOWED_TARGETS)`;
  return undefined;
}

function configuredAddresses(): Set<string> {
  const d = config().sre.discovery;
  return new Set([d.containerRuntimeHost, d.metricsUrl, d.proxyApiUrl].filter((a): a is string => !!a));
}

/** Refuses (400 naming the field) an address the API may not give a source of `kind`. */
export async function assertDiscoveryTarget(kind: SourceKind, address: string, path = 'body.address'): Promise<void> {
  const problem = await discoveryTargetProblem(kind, address);
  if (problem) throw new ValidationError(`The source address is not allowed: ${problem}.`, [{ path, message: problem }]);
}

/**
 * The address check a read of an API-set source connects under (see withAddressGuard): internal
 * addresses refused, on the addresses the connection really uses. Undefined for configured or
 * allow-listed targets, which may be internal.
 */
export function connectCheckFor(address: string): AddressCheck | undefined {
  if (configuredAddresses().has(address) || !/^(https?|tcp):/i.test(address)) return undefined;
  const url = new URL(address);
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const allowed = allowList();
  if (allowed.has(host) || allowed.has(`${host}:${url.port}`)) return undefined;
  return (ip) => (isInternalAddress(ip) ? `resolves to the private or loopback address ${ip}; refused (DISCOVERY_ALLOWED_TARGETS)` : undefined);
}
