import type { JsonObject } from '../message.ts';
import type { ToolSpec } from '../llm/llm-service.ts';
import type { Context } from './context.ts';

/**
 * A tool the model may call. `execute` gets the decoded arguments (not checked against
 * `parameters`: the model can send anything, so a tool validates what it relies on) and the
 * call's context. Its result is sent back as the tool message's content: strings as they
 * are, anything else as JSON. A throw becomes `{"error": {...}}` content, never a crash of
 * the loop.
 */
export interface Tool extends ToolSpec {
  /**
   * Runs the call: `args` as the model sent them (decoded, unchecked), `context` the call's. Its
   * result (or error) goes back to the model.
   */
  execute(args: JsonObject, context: Context): Promise<unknown>;
}

/** Declares a tool with typed arguments. The type is a promise by the schema, not a check. */
export function defineTool<A extends JsonObject = JsonObject>(tool: ToolSpec & {
  execute(args: A, context: Context): Promise<unknown>;
}): Tool {
  return tool as Tool;
}

export function toolSpec(tool: Tool): ToolSpec {
  return { name: tool.name, description: tool.description, parameters: tool.parameters };
}
