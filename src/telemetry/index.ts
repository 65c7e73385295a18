/** Mnemo's OpenTelemetry traces (tracing.ts has the contract; gen-ai.ts the GenAI conventions). */
export { detached, failSpan, linkedRoot, noteLink, tracedStream, TRACER_NAME, withSpan, type WithSpanOptions } from './tracing.ts';
export { tracedLlm, withToolSpan, withTurnSpan, type ModelInfo } from './gen-ai.ts';
