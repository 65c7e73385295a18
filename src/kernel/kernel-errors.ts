import { MnemoError } from '../errors.ts';
import type { Context } from './context.ts';
import type { ToolCallRecord } from './tool-call.ts';

/** The kernel has no LLM service to call. */
export class NoLlmServiceError extends MnemoError {
  /** Always `'no_llm_service'`. */
  readonly code = 'no_llm_service';
  constructor() {
    super('no LLM service configured on this kernel');
  }
}

/** `invokeTool` named a tool the kernel does not have. */
export class ToolNotFoundError extends MnemoError {
  /** Always `'tool_not_found'`. */
  readonly code = 'tool_not_found';
  constructor(
    /** The name asked for. */
    readonly toolName: string,
  ) {
    super(`tool not found: ${toolName}`);
  }
}

/**
 * The model still asked for tools on the last allowed LLM call. That batch of tools has run;
 * `toolCallsMade` lists every call of the run, `context` is where the loop stopped.
 */
export class MaxToolIterationsError extends MnemoError {
  /** Always `'max_tool_iterations'`. */
  readonly code = 'max_tool_iterations';
  constructor(
    /** The LLM calls allowed (`maxToolIterations`). */
    readonly limit: number,
    /** Every tool call of the run, the last batch included. */
    readonly toolCallsMade: readonly ToolCallRecord[],
    /** The context where the loop stopped (filter states included). */
    readonly context: Context,
  ) {
    super(`the model still called tools after ${limit} LLM calls`);
  }
}

/** The run's tool-call budget was spent and the loop would call the model again. */
export class MaxToolCallsError extends MnemoError {
  /** Always `'max_tool_calls'`. */
  readonly code = 'max_tool_calls';
  constructor(
    /** The tool calls allowed (`maxToolCalls`). */
    readonly limit: number,
    /** Every tool call of the run (a batch may have crossed the limit). */
    readonly toolCallsMade: readonly ToolCallRecord[],
  ) {
    super(`the run made ${toolCallsMade.length} tool calls; the limit is ${limit}`);
  }
}
