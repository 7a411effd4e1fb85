/**
 * The tool-server configuration file of coding assistants (spec 002): `{"mcpServers": {name: {command,
 * args, env?}}}` with token values as placeholders (<ACCESS_TOKEN>, <API_KEY>). Writes one for this
 * platform, and checks a file: its shape, secrets where placeholders belong, and an MCP handshake with
 * each server that runs on this machine.
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { z } from 'zod';

export const mcpServerEntry = z.strictObject({
  command: z.string().min(1),
  args: z.array(z.string()),
  env: z.record(z.string(), z.string()).optional(),
});
export const mcpConfigFile = z.strictObject({ mcpServers: z.record(z.string().min(1), mcpServerEntry) });
export type McpServerEntry = z.infer<typeof mcpServerEntry>;
export type McpConfigFile = z.infer<typeof mcpConfigFile>;

/** The stdio bridge to remote (Streamable HTTP) servers, pinned so every assistant runs the same one. */
export const bridgePackage = 'mcp-remote@0.15.1';

/** A remote server through the bridge; the header value comes from env so clients that split args on spaces keep it whole. */
function bridged(url: string, authorization: string): McpServerEntry {
  const { protocol, hostname } = new URL(url);
  const local = ['localhost', '127.0.0.1', '::1'].includes(hostname);
  return {
    command: 'npx',
    args: ['-y', bridgePackage, url, '--header', 'Authorization:${AUTH_HEADER}', ...(protocol === 'http:' && !local ? ['--allow-http'] : [])],
    env: { AUTH_HEADER: authorization },
  };
}

/** The password of a connection string replaced by a placeholder (a trust-auth URL has none and stays as is). */
export function maskPassword(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    return url.replace(`:${u.password}@`, ':<PASSWORD>@');
  } catch {
    return '<DATABASE_URL>';
  }
}

export interface GenerateOptions {
  /** Checkout whose compiled build (dist/) runs the CRM server. */
  root: string;
  /** The API (tool gateway at /mcp). */
  apiUrl: string;
  /** The issue-tracker tool server (its /mcp). */
  toolsUrl: string;
  databaseUrl: string;
}

/** This platform's file: its CRM (stdio, compiled build), gateway and issue-tracker server, and the vendors' project tracker and source-code host. */
export function generateMcpConfig(o: GenerateOptions): McpConfigFile {
  return {
    mcpServers: {
      'switchboard-crm': { command: 'node', args: [path.join(o.root, 'dist/shared/cli/mcp-crm.js')], env: { DATABASE_URL: maskPassword(o.databaseUrl) } },
      'switchboard-gateway': bridged(`${o.apiUrl.replace(/\/+$/, '')}/mcp`, 'Bearer <API_KEY>'),
      'issue-tracker': bridged(`${o.toolsUrl.replace(/\/+$/, '')}/mcp`, 'Bearer <ACCESS_TOKEN>'),
      // Linear's hosted MCP server takes a personal API key in the Authorization header.
      linear: bridged('https://mcp.linear.app/mcp', 'Bearer <API_KEY>'),
      // GitHub's hosted MCP server (github/github-mcp-server) takes a personal access token as a bearer token.
      github: bridged('https://api.githubcopilot.com/mcp/', 'Bearer <ACCESS_TOKEN>'),
    },
  };
}

export interface Finding {
  /** Where, e.g. mcpServers.github.env.AUTH_HEADER */
  path: string;
  message: string;
}

/** Shape errors of a parsed JSON document, each naming its path. */
export function shapeErrors(doc: unknown): Finding[] {
  const parsed = mcpConfigFile.safeParse(doc);
  if (parsed.success) return [];
  return parsed.error.issues.map((i) => ({ path: i.path.length ? i.path.map(String).join('.') : '(root)', message: i.message }));
}

const placeholder = /<[A-Z][A-Z0-9_]*>/g;
const envReference = /\$\{[A-Za-z_][A-Za-z0-9_]*\}/g;
const hasPlaceholder = (s: string) => /<[A-Z][A-Z0-9_]*>/.test(s) || /\$\{[A-Za-z_][A-Za-z0-9_]*\}/.test(s);
/** Token formats with a known prefix (GitLab, GitHub, Linear, OpenAI-style, Slack, AWS, JWT). */
const knownTokens: Array<[RegExp, string]> = [
  [/\bgl(pat|dt|rt|ptt|oas|cbt)-[A-Za-z0-9_-]{8,}/, 'a GitLab token'],
  [/\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{16,}/, 'a GitHub token'],
  [/\bgithub_pat_[A-Za-z0-9_]{20,}/, 'a GitHub token'],
  [/\blin_(api|oauth)_[A-Za-z0-9]{16,}/, 'a Linear key'],
  [/\bsk-[A-Za-z0-9_-]{16,}/, 'an API secret key (sk-)'],
  [/\bxox[abpr]-[A-Za-z0-9-]{10,}/, 'a Slack token'],
  [/\bAKIA[0-9A-Z]{16}\b/, 'an AWS access key'],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/, 'a JWT'],
];
const secretName = /(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|_KEY$|^KEY$|_PAT$|AUTH)/i;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  return [...counts.values()].reduce((h, n) => h - (n / s.length) * Math.log2(n / s.length), 0);
}

/** Why a value looks like a real secret, or null. Placeholders and ${VAR} references are not secrets. */
export function secretReason(value: string, name?: string): string | null {
  const rest = value.replace(placeholder, '').replace(envReference, '');
  for (const [pattern, what] of knownTokens) if (pattern.test(rest)) return `looks like ${what}`;
  const credentials = /[a-z][a-z0-9+.-]*:\/\/[^/:@\s]+:([^@\s]+)@/i.exec(rest);
  if (credentials) return 'holds a password in a URL';
  const bearer = /\b(Bearer|Basic|token)\s+(\S+)/i.exec(rest);
  if (bearer) return `holds a ${bearer[1]} credential`;
  if (name && secretName.test(name) && value.trim() && !hasPlaceholder(value)) return `${name} holds a value, not a placeholder`;
  // A URL's host and path name things (a database, an endpoint); only its query may carry a secret.
  let scanned = rest;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(rest)) {
    try {
      scanned = [...new URL(rest).searchParams.values()].join(' ');
    } catch {
      // not a parseable URL: scan it whole
    }
  }
  for (const piece of scanned.split(/[\s:=,;@/?&"']+/)) {
    if (piece.length >= 32 && /^[A-Za-z0-9_+\-.]+$/.test(piece) && /\d/.test(piece) && /[A-Za-z]/.test(piece) && !uuid.test(piece) && !/\.(js|ts|mjs|cjs|json)$/.test(piece) && entropy(piece) >= 3.5) {
      return 'looks like a generated secret (a long random string)';
    }
  }
  return null;
}

/** Real-looking secrets in a file's args and env, where a placeholder belongs. The secret itself is never repeated. */
export function findSecrets(file: McpConfigFile): Finding[] {
  const found: Finding[] = [];
  for (const [name, entry] of Object.entries(file.mcpServers)) {
    entry.args.forEach((arg, i) => {
      const why = secretReason(arg);
      if (why) found.push({ path: `mcpServers.${name}.args.${i}`, message: `${why}; write a placeholder such as <ACCESS_TOKEN> or <API_KEY>` });
    });
    for (const [key, value] of Object.entries(entry.env ?? {})) {
      const why = secretReason(value, key);
      if (why) found.push({ path: `mcpServers.${name}.env.${key}`, message: `${why}; write a placeholder such as <ACCESS_TOKEN> or <API_KEY>` });
    }
  }
  return found;
}

/** The URL a bridge entry connects to (then the server is remote, not started by the check), or null for a local server. */
export function remoteUrl(entry: McpServerEntry): string | null {
  return entry.args.find((a) => /^https?:\/\//i.test(a)) ?? null;
}

export type HandshakeResult = { ok: true; tools: number; server?: string } | { ok: false; reason: string };

/** Starts a local server, completes initialize and tools/list over stdio, and stops it. */
export async function handshake(entry: McpServerEntry, timeoutMs = 20_000): Promise<HandshakeResult> {
  const transport = new StdioClientTransport({ command: entry.command, args: entry.args, env: { ...getDefaultEnvironment(), ...entry.env }, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const client = new Client({ name: 'switchboard-mcp-config-check', version: '1.0.0' });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no MCP answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([client.connect(transport), timeout]);
    const { tools } = await Promise.race([client.listTools(), timeout]);
    return { ok: true, tools: tools.length, server: client.getServerVersion()?.name };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') return { ok: false, reason: `command not found: ${entry.command}` };
    const tail = stderr.trim().split('\n').slice(-3).join(' | ');
    return { ok: false, reason: `${e.message}${tail ? ` (stderr: ${tail.slice(0, 500)})` : ''}` };
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => {});
  }
}

export interface CheckReport {
  ok: boolean;
  lines: string[];
}

/** Checks a file's text: shape, secrets, then a handshake with each local server. */
export async function checkMcpConfig(text: string, timeoutMs = 20_000): Promise<CheckReport> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return { ok: false, lines: [`(root): not JSON: ${(err as Error).message}`] };
  }
  const shape = shapeErrors(doc);
  if (shape.length) return { ok: false, lines: shape.map((f) => `${f.path}: ${f.message}`) };
  const file = doc as McpConfigFile;
  const secrets = findSecrets(file);
  if (secrets.length) return { ok: false, lines: secrets.map((f) => `${f.path}: ${f.message}`) };
  const lines: string[] = [];
  let ok = true;
  for (const [name, entry] of Object.entries(file.mcpServers)) {
    const url = remoteUrl(entry);
    if (url) {
      lines.push(`${name}: remote (${url} through ${entry.command} ${entry.args.find((a) => !a.startsWith('-')) ?? ''}): not started, the check runs local servers only`);
      continue;
    }
    const unfilled = [...JSON.stringify(entry).matchAll(placeholder)].map((m) => m[0]);
    if (unfilled.length) {
      lines.push(`${name}: local, not started: fill in ${[...new Set(unfilled)].join(', ')} first`);
      continue;
    }
    const result = await handshake(entry, timeoutMs);
    if (result.ok) lines.push(`${name}: ok, ${result.tools} tools (${result.server ?? 'unnamed server'})`);
    else {
      ok = false;
      lines.push(`${name}: FAILED: ${result.reason}`);
    }
  }
  return { ok, lines };
}
