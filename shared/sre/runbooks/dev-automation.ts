/**
 * The automation system (n8n) `npm run dev -- --demo` and the demo's test embed when AUTOMATION_URL is
 * unset: it answers every workflow webhook with a small success body, so demo runbook executions
 * complete. Like the embedded identity provider (shared/identity/dev-provider.ts), development only.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startDevAutomation(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ status: 'ok', demo: true, workflow: req.url }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
