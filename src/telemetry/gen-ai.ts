/**
 * The OpenTelemetry GenAI semantic conventions for Mnemo's spans (span names and attributes
 * as the conventions spell them):
 *
 * - a model call: `chat {model}`, kind CLIENT, `gen_ai.operation.name` `chat`,
 *   `gen_ai.provider.name`, `gen_ai.request.model`, and from the answer
 *   `gen_ai.response.finish_reasons`, `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`
 *   (when the server reported usage);
 * - a tool call: `execute_tool {name}`, `gen_ai.operation.name` `execute_tool`,
 *   `gen_ai.tool.name`, `gen_ai.tool.call.id`;
 * - a chat turn: `invoke_agent mnemo`, `gen_ai.operation.name` `invoke_agent`,
 *   `gen_ai.agent.name` `mnemo`, `gen_ai.conversation.id` (the session id).
 *
 * The model-call span itself is made by the LLM layer (llm/traced-llm.ts), which knows what a
 * response holds; this file is the vocabulary and the spans of tools and turns.
 */
import type { Attributes } from '@opentelemetry/api';
import { withLeafSpan, withSpan, type TraceContext } from './tracing.ts';

export const GEN_AI_OPERATION = 'gen_ai.operation.name';
export const GEN_AI_PROVIDER = 'gen_ai.provider.name';
export const GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const GEN_AI_FINISH_REASONS = 'gen_ai.response.finish_reasons';
export const GEN_AI_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const GEN_AI_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
export const GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
export const GEN_AI_AGENT_NAME = 'gen_ai.agent.name';
export const GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id';

/** Runs one tool call (the application's code: `activate`) in its `execute_tool` span, a child of `parent`. */
export function withToolSpan<T>(name: string, callId: string, parent: TraceContext | undefined, fn: () => Promise<T>): Promise<T> {
  const attributes = { [GEN_AI_OPERATION]: 'execute_tool', [GEN_AI_TOOL_NAME]: name, [GEN_AI_TOOL_CALL_ID]: callId };
  return withLeafSpan(`execute_tool ${name}`, attributes, fn, { parent, activate: true });
}

/** Runs one chat turn of `sessionId` in its `invoke_agent` span, a child of the active context; `fn` gets the turn's. */
export function withTurnSpan<T>(sessionId: unknown, fn: (turn: TraceContext | undefined) => Promise<T>): Promise<T> {
  const attributes: Attributes = { [GEN_AI_OPERATION]: 'invoke_agent', [GEN_AI_AGENT_NAME]: 'mnemo' };
  if (typeof sessionId === 'string') attributes[GEN_AI_CONVERSATION_ID] = sessionId;
  return withSpan('invoke_agent mnemo', attributes, (_, turn) => fn(turn));
}
