/**
 * `mnemoTools({ runtime, userId })`: the memory tools of the MCP server (src/mcp/memory-tools.ts:
 * the same names, descriptions, JSON Schemas and JSON answers) as AI SDK tools, bound to one
 * user. The arguments go to recall unchanged; a refused or failed call throws recall's error
 * (a `MnemoError` with its `code`), which the SDK hands the model as the tool's error.
 */
import { jsonSchema, tool, type ToolSet } from 'ai';
import { MEMORY_TOOLS } from '../mcp/memory-tools.ts';
import type { MemoryRecall } from '../mcp/recall-view.ts';
import { assertUserId } from '../recall/recall-ids.ts';
import type { JsonObject } from '../message.ts';

/** What `mnemoTools` takes. */
export interface MnemoToolsOptions {
  /** A runtime (`startRuntime`), or anything with its `recall`. */
  runtime: {
    /** The recall service the tools call. */
    readonly recall: MemoryRecall;
  };
  /** The one user the tools act for. */
  userId: string;
}

/**
 * The memory tools (`MEMORY_TOOLS` of `mnemo/mcp`) as an AI SDK `ToolSet` bound to `userId`, for
 * `generateText({ tools })` and the like.
 *
 * @throws `InvalidInputError` `invalid_id` for an unusable `userId`.
 */
export function mnemoTools(options: MnemoToolsOptions): ToolSet {
  const userId = assertUserId(options.userId);
  const { recall } = options.runtime;
  return Object.fromEntries(
    MEMORY_TOOLS.map((def) => [
      def.name,
      tool({
        title: def.title,
        description: def.description,
        inputSchema: jsonSchema<Record<string, unknown>>(def.inputSchema as Parameters<typeof jsonSchema>[0]),
        execute: (args: Record<string, unknown>): Promise<JsonObject> => def.run(recall, userId, args),
      }),
    ]),
  );
}
