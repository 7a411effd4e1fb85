/**
 * The one registry of agent tools. A tool is declared once (name, description, zod input schema,
 * handler) and used by the LLM agent, the tool-gateway endpoints and the MCP servers alike.
 */
import { z } from './zod.js';
import { ValidationError, fieldErrors, type FieldError } from './errors.js';

/** Who a tool call is for: set by the agent from its session (the gateway and MCP servers have none). */
export interface ToolContext {
  user_id?: string;
  session_id?: string;
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  /** Exact tool name, e.g. crm_create_lead: a public contract. */
  name: string;
  description: string;
  /** Executor type in the tool gateway (e.g. "crm"). */
  executor: string;
  input: S;
  handler: (input: z.output<S>, context: ToolContext) => Promise<unknown>;
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

/** JSON Schema of a tool's input (for the gateway listing, the LLM and MCP). */
export function toolJsonSchema(tool: ToolDefinition): Record<string, unknown> {
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
export async function executeTool(tool: ToolDefinition, input: unknown, context: ToolContext = {}): Promise<unknown> {
  const parsed = tool.input.safeParse(input ?? {});
  if (!parsed.success) throw new ToolInputError(tool.name, fieldErrors('input', parsed.error.issues));
  return tool.handler(parsed.data, context);
}
