/**
 * The one registry of agent tools. A tool is declared once (name, description, zod input schema,
 * handler) and used by the LLM agent, the tool-gateway endpoints and the MCP servers alike.
 */
import { createHash } from 'node:crypto';
import { z } from './zod.js';
import { ValidationError, fieldErrors, type FieldError } from './errors.js';
import type { Role } from './auth/roles.js';
import { hasScope, type Authority, type Scope } from './auth/scopes.js';

/** Who is calling a tool: an API key or a signed-in person (gateway routes, /mcp), or the platform's agent in a session. */
export interface ToolCaller {
  kind: 'api_key' | 'agent' | 'stdio' | 'person';
  /** The API key's id (`key:<name>` or a digest prefix, never the key), `user:<user_id>`, the agent's session id, or "stdio" (local MCP server). */
  id: string;
  /** The person the call acts for (the agent's session user, or the signed-in person): tools over a person's own data use it. */
  user_id?: string;
  /**
   * With whose rights the call runs, as the caller knew it; the gateway re-reads it when the call runs
   * (roles of the person, scopes of the key). Unset for the agent: the rights of the person it serves (user_id).
   */
  authority?: Authority;
  /**
   * A ceiling on the person's roles for this call, whatever they hold: a phone caller known only by
   * caller ID (spoofable) gets ['user'], the portal tool set over their own data, until a PIN proves them.
   */
  rolesAtMost?: readonly Role[];
}

/**
 * Who may use a tool. `own`: it works only on the acting person's own rows, so any person may (a key
 * only while acting as a user, with portal:impersonate). Otherwise a person needs one of `roles`,
 * a key the scope `tools` and `scope`.
 */
export type ToolAccess = { own: true } | { roles: readonly Role[]; scope: Scope };

/** Tools that declare no access of their own and whose executor is not listed: operators only. */
const closedAccess: ToolAccess = { roles: ['sre'], scope: '*' };
const executorAccess: Record<string, ToolAccess> = {};

/** Sets the access of every tool of an executor that declares none itself (one line per domain, in tool-catalog.ts). */
export function setExecutorAccess(executor: string, access: ToolAccess): void {
  executorAccess[executor] = access;
}

/** The access rule of a tool. */
export const accessOf = (tool: ToolDefinition): ToolAccess => tool.access ?? executorAccess[tool.executor] ?? closedAccess;

/** Whether an authority may use a tool; `userId` is the person the call acts for (own tools need one). */
export function mayUse(authority: Authority, tool: ToolDefinition, userId: string | undefined): boolean {
  const access = accessOf(tool);
  switch (authority.kind) {
    case 'local':
      return true;
    case 'none':
      return false;
    case 'person':
      return 'own' in access ? userId === authority.user_id : access.roles.some((r) => authority.roles.includes(r));
    case 'key':
      if ('own' in access) return !!userId && hasScope(authority.scopes, 'portal:impersonate');
      return hasScope(authority.scopes, 'tools') && hasScope(authority.scopes, access.scope);
  }
}

/** What a tool handler knows about its call besides the input. */
export interface ToolContext {
  caller: ToolCaller;
  /** The tool's name (one handler may serve several tools, e.g. workflows). */
  tool: string;
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  /** Exact tool name, e.g. crm_create_lead: a public contract. */
  name: string;
  description: string;
  /** Executor type in the tool gateway (e.g. "crm"). */
  executor: string;
  /**
   * Whether a call changes data (creates, updates, acknowledges, runs, sends). The assistant never runs
   * such a tool on its own: the person is asked first and it runs on their yes (shared/agent/consent.ts).
   * Required, so no tool is left undeclared.
   */
  changesData: boolean;
  input: S;
  handler: (input: z.output<S>, ctx: ToolContext) => Promise<unknown>;
  /** JSON Schema shown instead of the zod schema's (tools whose schema comes from outside, e.g. workflows). */
  jsonSchema?: Record<string, unknown>;
  /** Who may use it; default the access of its executor (setExecutorAccess), else operators only. */
  access?: ToolAccess;
}

/**
 * Tools that come and go with an external system (e.g. automation workflows): listed on demand, each
 * source caching and bounding its own refresh.
 */
export interface ToolSource {
  executor: string;
  list(): Promise<ToolDefinition[]>;
}

/** Declares a tool with its input type inferred from the schema. */
export const defineTool = <S extends z.ZodType>(tool: ToolDefinition<S>): ToolDefinition<S> => tool;

const tools = new Map<string, ToolDefinition>();

/** Adds tools to the registry; a name registered twice is a programming error. */
export function registerTools(list: ToolDefinition<any>[]): void {
  for (const tool of list) {
    if (tools.has(tool.name)) throw new Error(`tool "${tool.name}" is registered twice`);
    tools.set(tool.name, tool);
  }
}

/** Every registered tool, optionally of one executor type. */
export function listTools(executor?: string): ToolDefinition[] {
  return [...tools.values()].filter((t) => !executor || t.executor === executor);
}

export function getTool(name: string): ToolDefinition | undefined {
  return tools.get(name);
}

const sources = new Map<string, ToolSource>();

/** Adds a source of dynamic tools (one per executor). */
export function registerToolSource(source: ToolSource): void {
  if (sources.has(source.executor)) throw new Error(`tool source "${source.executor}" is registered twice`);
  sources.set(source.executor, source);
}

/** The registry's tools and every source's current tools, optionally of one executor type. */
export async function availableTools(executor?: string): Promise<ToolDefinition[]> {
  // An empty registry means an entry file forgot the catalog: say so rather than offer no tools.
  if (!tools.size && !sources.size) throw new Error('No tool is registered: the entry file of this process loads the tool catalog (shared/tool-catalog.ts).');
  const dynamic = await Promise.all([...sources.values()].filter((s) => !executor || s.executor === executor).map((s) => s.list()));
  const registered = listTools(executor);
  const names = new Set(registered.map((t) => t.name));
  // A dynamic tool never shadows a declared one.
  return [...registered, ...dynamic.flat().filter((t) => !names.has(t.name))];
}

/** A declared tool by name, else one of the sources' current tools. */
export async function findTool(name: string): Promise<ToolDefinition | undefined> {
  return tools.get(name) ?? (await availableTools()).find((t) => t.name === name);
}

/** JSON Schema of a tool's input (for the gateway listing, the LLM and MCP). */
export function toolJsonSchema(tool: ToolDefinition): Record<string, unknown> {
  if (tool.jsonSchema) return tool.jsonSchema;
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return schema;
}

/** Raised for bad tool input: names each field, so agents can correct themselves. */
export class ToolInputError extends ValidationError {
  constructor(tool: string, errors: FieldError[]) {
    super(`Invalid input for tool ${tool}: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, errors);
  }
}

/** Validates input with the tool's schema and runs it. Throws NotFoundError-free: unknown names are the caller's concern. */
export async function executeTool(tool: ToolDefinition, input: unknown, caller: ToolCaller = { kind: 'agent', id: 'local' }): Promise<unknown> {
  const parsed = tool.input.safeParse(input ?? {});
  if (!parsed.success) throw new ToolInputError(tool.name, fieldErrors('input', parsed.error.issues));
  return tool.handler(parsed.data, { caller, tool: tool.name });
}

/** Domain errors name request fields (body.x); a tool caller sent tool input (input.x). */
export function asToolInput<I, C, R>(handler: (input: I, ctx: C) => Promise<R>): (input: I, ctx: C) => Promise<R> {
  return async (input, ctx) => {
    try {
      return await handler(input, ctx);
    } catch (err) {
      if (err instanceof ValidationError) {
        // A cursor arrives as query.cursor from the list functions; for an agent it is input too.
        const errors = err.errors.map((e) => ({ ...e, path: e.path.replace(/^(body|query)\./, 'input.') }));
        throw new ValidationError(err.message, errors, err.extensions);
      }
      throw err;
    }
  };
}

/** SHA-256 of a value's JSON (keys sorted, so equal inputs give equal digests). */
export function inputDigest(input: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(canonical) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])])) : v;
  return createHash('sha256').update(JSON.stringify(canonical(input ?? null)) ?? 'null').digest('hex');
}
