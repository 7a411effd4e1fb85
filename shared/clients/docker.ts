/**
 * The container runtime client: the Docker Engine API through `dockerode`, at CONTAINER_RUNTIME_HOST
 * (tcp://host:port of a socket proxy, or a unix socket path).
 */
import type Docker from 'dockerode';
import { logger } from '../logger.js';
import { ExternalHttpError } from './http.js';

/** The part of GET /containers/json that discovery reads. */
export interface ContainerSummary {
  Id: string;
  Names: string[];
  Image: string;
  State: string;
  Status: string;
  Labels: Record<string, string>;
  Ports: Array<{ IP?: string; PrivatePort: number; PublicPort?: number; Type: string }>;
  NetworkSettings?: { Networks?: Record<string, { IPAddress?: string; Aliases?: string[] | null }> };
}

/** dockerode options of an address: tcp://host:port (or http[s]://) or a unix socket path. */
export function dockerOptions(address: string): Docker.DockerOptions {
  if (/^(tcp|http|https):\/\//.test(address)) {
    const url = new URL(address.replace(/^tcp:/, 'http:'));
    return { protocol: url.protocol === 'https:' ? 'https' : 'http', host: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 2375)), timeout: 30_000 };
  }
  return { socketPath: address.replace(/^unix:\/\//, ''), timeout: 30_000 };
}

/** A typed client of one container runtime. */
export function dockerClient(address: string) {
  return {
    /** Every container, running or not. */
    async listContainers(): Promise<ContainerSummary[]> {
      // Loaded on first use: dockerode and its dependencies cost an API process ~6 MB of heap (and ~17 MB external) that only discovery runs need.
      const { default: Docker } = await import('dockerode');
      const docker = new Docker(dockerOptions(address));
      try {
        return (await docker.listContainers({ all: true })) as unknown as ContainerSummary[];
      } catch (err) {
        // dockerode quotes the engine's answer in its message; that is logged, the error names only the status.
        const status = (err as { statusCode?: number }).statusCode;
        if (status === undefined) throw err;
        logger('http-client').warn({ system: 'docker', status, err: (err as Error).message }, `Docker GET /containers/json answered ${status}`);
        throw new ExternalHttpError(`Docker GET /containers/json answered ${status}`, status);
      }
    },
  };
}
