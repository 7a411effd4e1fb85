/**
 * The tool gateway: the one path by which a tool call reaches its executor (gateway routes, /mcp and
 * the agent). Each call is bounded in time (TOOL_CALL_TIMEOUT_MS) and in result size
 * (TOOL_RESULT_MAX_BYTES), and audited in tool_calls (who, tool, executor, outcome, duration, the
 * input's SHA-256 digest, never the input).
 */
import { config } from '../config.js';
import { GatewayTimeoutError, NotFoundError, ToolResultTooLargeError } from '../errors.js';
import { logger } from '../logger.js';
import { loadToolCatalog } from '../tool-catalog.js';
import { executeTool, findTool, inputDigest, ToolInputError, type ToolCaller, type ToolDefinition } from '../tools.js';
import { recordToolCall, type ToolCallOutcome } from './tool-calls.store.js';

/** A tool by name from the registry or a dynamic source; a NotFoundError otherwise. */
export async function resolveTool(name: string): Promise<ToolDefinition> {
  loadToolCatalog();
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
  err instanceof ToolInputError ? 'invalid_input' : err instanceof GatewayTimeoutError ? 'timeout' : err instanceof ToolResultTooLargeError ? 'too_large' : 'error';

/** Runs one tool call through the gateway: validated, bounded, audited. Errors propagate after the audit row is written. */
export async function callTool(tool: ToolDefinition, input: unknown, caller: ToolCaller): Promise<unknown> {
  const { callTimeoutMs, resultMaxBytes } = config().tools;
  const started = performance.now();
  const audit = { tool: tool.name, executor: tool.executor, caller_kind: caller.kind, caller_id: caller.id, input_sha256: inputDigest(input) };
  const record = (outcome: ToolCallOutcome, extra: { error?: string; result_bytes?: number }) =>
    recordToolCall({ ...audit, outcome, error: extra.error ?? null, result_bytes: extra.result_bytes ?? null, duration_ms: Math.round(performance.now() - started) }).catch((err) =>
      logger('tools').error({ err, tool: tool.name }, 'could not write the tool call audit row'),
    );
  try {
    const result = (await withTimeout(executeTool(tool, input, caller), callTimeoutMs, tool.name)) ?? null;
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
    await recordToolCall({ tool: name.slice(0, 200), executor: 'unknown', caller_kind: caller.kind, caller_id: caller.id, outcome: 'unknown_tool', error: (err as Error).message, duration_ms: 0, input_sha256: inputDigest(input), result_bytes: null });
    throw err;
  }
  return { tool, result: await callTool(tool, input, caller) };
}
