/**
 * What an API key may do: its scopes, and which scope each service route needs. A route's scope
 * comes from the table below (by path), so a new route under a known prefix is covered at once and
 * a route under no prefix needs a full-access key.
 */
import type { Role } from './roles.js';

/** Every scope a key can hold, with what it opens (shown in the API reference). */
export const scopeDescriptions = {
  '*': 'full access: every service route, acting as any user (the keys of API_KEYS)',
  sessions: 'session memory and the channels: /api/users, /api/sessions, /api/chat, /api/chatapp, /api/channels (acting in any session, as channel services do)',
  crm: 'the CRM: /api/v1/leads, accounts, opportunities, pipelines, CRM events; and the crm_* tools',
  sre: 'SRE automation: /api/v1/alerts, incidents, runbooks, cmdb, monitors, discovery, SRE events; and the sre_* and workflow_* tools',
  tools: 'the tool gateway (/api/v1/tools, /mcp); each tool also needs the scope of its domain (crm, sre, sessions for agent delegation)',
  'portal:impersonate': 'acting as a portal user: /api/portal/* with X-User-Id',
  keys: 'managing API keys: /api/v1/keys',
} as const;

export type Scope = keyof typeof scopeDescriptions;
export const scopes = Object.keys(scopeDescriptions) as Scope[];

/** Route path prefixes and the scope they need (first match wins); matched lower-cased. */
const scopeByPrefix: ReadonlyArray<[prefix: string, scope: Scope | 'any']> = [
  ['/api/health', 'any'],
  ['/api/users', 'sessions'],
  ['/api/sessions', 'sessions'],
  ['/api/chatapp/', 'sessions'],
  ['/api/chat', 'sessions'],
  ['/api/channels', 'sessions'],
  ['/api/v1/leads', 'crm'],
  ['/api/v1/accounts', 'crm'],
  ['/api/v1/opportunities', 'crm'],
  ['/api/v1/pipelines', 'crm'],
  ['/api/v1/crm/', 'crm'],
  ['/api/v1/alerts', 'sre'],
  ['/api/v1/incidents', 'sre'],
  ['/api/v1/runbooks', 'sre'],
  ['/api/v1/cmdb', 'sre'],
  ['/api/v1/monitors', 'sre'],
  ['/api/v1/sre/', 'sre'],
  ['/api/v1/tools', 'tools'],
  ['/mcp', 'tools'],
  ['/api/portal/', 'portal:impersonate'],
  ['/api/v1/keys', 'keys'],
];

/** The scope a key needs for a route path (OpenAPI template or request path); 'any': every valid key; '*' when no prefix matches. */
export function scopeForPath(path: string): Scope | 'any' {
  const p = path.toLowerCase();
  for (const [prefix, scope] of scopeByPrefix) {
    if (p === prefix || p.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`) || (prefix.endsWith('/') && p.startsWith(prefix))) return scope;
  }
  return '*';
}

/** Whether a key's scopes include `needed` ('*' includes everything). */
export const hasScope = (held: readonly Scope[], needed: Scope | 'any') => needed === 'any' || held.includes('*') || held.includes(needed);

/**
 * With whose rights something acts: a key (its scopes; `user_id` when it acts as a user), a signed-in
 * person (their roles, `user` included), or the operator's own machine (the stdio MCP server).
 */
export type Authority =
  | { kind: 'key'; key_id: string; scopes: readonly Scope[] }
  | { kind: 'person'; user_id: string; roles: readonly Role[] }
  | { kind: 'local' }
  | { kind: 'none' };
