/** Helpers of the alerting tests: fixtures and local HTTP servers speaking external wire formats. */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { onShutdown } from '../../shared/lifecycle.js';

/** The team's captured payloads: `shared/` sits beside the repository (in a checkout and in CI). */
const fixturesDir = new URL('../../../shared/fixtures/alertmanager/', import.meta.url);
export const fixture = (name: string) => JSON.parse(readFileSync(new URL(name, fixturesDir), 'utf8'));

export interface Recorded {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** A local HTTP server on a free port; `handle` answers each request (recorded in `requests`). */
export async function localServer(handle: (req: Recorded, res: http.ServerResponse) => void | Promise<void>) {
  const requests: Recorded[] = [];
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', async () => {
      let body: unknown = data;
      try {
        body = data ? JSON.parse(data) : undefined;
      } catch {
        // keep the raw text
      }
      const rec = { method: req.method!, url: req.url!, headers: req.headers, body };
      requests.push(rec);
      await handle(rec, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  onShutdown('local-server', () => new Promise((r) => server.close(() => r(undefined))));
  return { url, requests, server };
}

export const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
};

/** An Alertmanager v4 notification (the documented fixture) carrying one alert of this name. */
export function firing(alertname: string, labels: Record<string, string> = {}) {
  const body = fixture('webhook-v4-firing.json');
  body.alerts = [{ ...body.alerts[0], labels: { ...body.alerts[0].labels, alertname, ...labels }, fingerprint: createHash('sha256').update(alertname).digest('hex').slice(0, 16) }];
  body.groupLabels = { alertname };
  body.commonLabels = { ...body.commonLabels, alertname };
  return body;
}
