/**
 * The tool gateway: the one path by which a tool call reaches its executor (gateway routes, /mcp and
 * the agent). Each call is bounded in time (TOOL_CALL_TIMEOUT_MS) and in result size
 * (TOOL_RESULT_MAX_BYTES), and audited in tool_calls (who, tool, executor, outcome, duration, the
 * input's SHA-256 digest, never the input).
 */
import { config } from '../config.js';
import { accessOf } from '../tools.js';
import { ForbiddenError, GatewayTimeoutError, NotFoundError, ToolResultTooLargeError } from '../errors.js';
import { logger } from '../logger.js';
import { availableTools, executeTool, findTool, inputDigest, mayUse, ToolInputError, type ToolCaller, type ToolDefinition } from '../tools.js';
import { recordToolCall, type ToolCallOutcome } from './tool-calls.store.js';
import type { Authority } from '../auth/scopes.js';
import type { Role } from '../auth/roles.js';
import { currentKeyScopes } from '../auth/api-keys.js';
import { rolesOfUser } from '../users/users.store.js';

/**
 * The rights a call runs with, read now: the key's current scopes (none once revoked), the person's
 * current roles (`user` included; none once the user is gone), everything for the local stdio server.
 * The agent acts with the rights of the person it serves unless it was given another authority (a
 * delegated run keeps that of whoever asked).
 */
export async function currentAuthority(caller: ToolCaller): Promise<Authority> {
  if (caller.kind === 'stdio') return { kind: 'local' };
  const given = caller.authority;
  if (given?.kind === 'key') {
    const scopes = await currentKeyScopes(given.key_id);
    return scopes ? { ...given, scopes } : { kind: 'none' };
  }
  if (given?.kind === 'local' || given?.kind === 'none') return given;
  const userId = given?.kind === 'person' ? given.user_id : caller.kind === 'agent' ? caller.user_id : undefined;
  if (!userId) return { kind: 'none' };
  const roles = await rolesOfUser(userId);
  if (!roles) return { kind: 'none' };
  const held = [...new Set([...roles, 'user'])] as Role[];
  return { kind: 'person', user_id: userId, roles: caller.rolesAtMost ? held.filter((r) => caller.rolesAtMost!.includes(r)) : held };
}

/** The tools a caller may use now (optionally of one executor): what the listings and the agent offer. */
export async function toolsFor(caller: ToolCaller, executor?: string): Promise<ToolDefinition[]> {
  const authority = await currentAuthority(caller);
  return (await availableTools(executor)).filter((t) => mayUse(authority, t, caller.user_id));
}

/** What the audit row says of who acted: the person (user_id) besides the key, agent session or person id. */
const actingUser = (caller: ToolCaller) => caller.user_id ?? (caller.authority?.kind === 'person' ? caller.authority.user_id : undefined) ?? null;

/** A tool by name from the registry or a dynamic source; a NotFoundError otherwise. */
export async function resolveTool(name: string): Promise<ToolDefinition> {
  const tool = await findTool(name);
  if (!tool) throw new NotFoundError(`No tool ${name}.`);
  return tool;
}

function withTimeout<T>(work: Promise<T>, ms: number, tool: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  // The handler cannot be cancelled in-process; it finishes in the background and its result is dropped.
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new GatewayTimeoutError(`Tool ${tool} did not finish within ${ms} ms (TOOL_CALL_TIMEOUT_MS).`, [], { timeout_ms: ms })), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

const outcomeOf = (err: unknown): ToolCallOutcome =>
  err instanceof ForbiddenError ? 'forbidden' : err instanceof ToolInputError ? 'invalid_input' : err instanceof GatewayTimeoutError ? 'timeout' : err instanceof ToolResultTooLargeError ? 'too_large' : 'error';

/**
 * Runs one tool call through the gateway: the caller's rights checked now (403 otherwise, whatever
 * was listed before), validated, bounded, audited. Errors propagate after the audit row is written.
 */
export async function callTool(tool: ToolDefinition, input: unknown, caller: ToolCaller): Promise<unknown> {
  const { callTimeoutMs, resultMaxBytes } = config().tools;
  const started = performance.now();
  const audit = { tool: tool.name, executor: tool.executor, caller_kind: caller.kind, caller_id: caller.id, user_id: actingUser(caller), input_sha256: inputDigest(input) };
  const record = (outcome: ToolCallOutcome, extra: { error?: string; result_bytes?: number }) =>
    recordToolCall({ ...audit, outcome, error: extra.error ?? null, result_bytes: extra.result_bytes ?? null, duration_ms: Math.round(performance.now() - started) }).catch((err) =>
      logger('tools').error({ err, tool: tool.name }, 'could not write the tool call audit row'),
    );
  try {
    const authority = await currentAuthority(caller);
    if (!mayUse(authority, tool, caller.user_id)) {
      throw new ForbiddenError(`Tool ${tool.name} is not available to ${caller.kind === 'agent' ? 'the assistant of this person' : 'this caller'}: it needs ${describeAccess(tool)}.`);
    }
    const result = (await withTimeout(executeTool(tool, input, { ...caller, authority }), callTimeoutMs, tool.name)) ?? null;
    const bytes = Buffer.byteLength(JSON.stringify(result) ?? 'null');
    if (bytes > resultMaxBytes) {
      throw new ToolResultTooLargeError(`Tool ${tool.name} returned ${bytes} bytes, more than the gateway's limit of ${resultMaxBytes} (TOOL_RESULT_MAX_BYTES); ask for less (a filter or a smaller page).`, [], {
        result_bytes: bytes,
        limit_bytes: resultMaxBytes,
      });
    }
    await record('ok', { result_bytes: bytes });
    return result;
  } catch (err) {
    await record(outcomeOf(err), { error: err instanceof Error ? err.message.slice(0, 1000) : String(err), result_bytes: (err as { extensions?: { result_bytes?: number } }).extensions?.result_bytes });
    throw err;
  }
}

/** Resolves a tool by name and calls it; an unknown name is audited too. */
export async function callToolByName(name: string, input: unknown, caller: ToolCaller): Promise<{ tool: ToolDefinition; result: unknown }> {
  let tool: ToolDefinition;
  try {
    tool = await resolveTool(name);
  } catch (err) {
    await recordToolCall({ tool: name.slice(0, 200), executor: 'unknown', caller_kind: caller.kind, caller_id: caller.id, user_id: actingUser(caller), outcome: 'unknown_tool', error: (err as Error).message, duration_ms: 0, input_sha256: inputDigest(input), result_bytes: null });
    throw err;
  }
  return { tool, result: await callTool(tool, input, caller) };
}

function describeAccess(tool: ToolDefinition): string {
  const access = accessOf(tool);
  return 'own' in access ? 'a person acting on their own data' : `the role ${access.roles.join(' or ')} (a key: the scopes tools and ${access.scope})`;
}
