export { createAgent } from './agent.ts';
export type { Agent, AgentConfig, AgentRunResult } from './agent.ts';
export { resolveMemory, type MemoryConfig } from './memory-config.ts';
export { danglingToolResults } from './dangling-tool-calls.ts';
export { failedTurnMarker, isFailedTurnMarker, withoutFailedTurns, type FailedTurnMarker, type TurnError } from './failed-turns.ts';
