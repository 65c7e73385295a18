/**
 * src/memory: the store layer (beamai's ChatMemory). Contracts, the two backends, validation
 * at the boundary, typed errors, and the default store.
 */
export type { ChatMemory } from './contract/chat-memory.ts';
export type { MessageLog, NewEntry, RangeQuery } from './contract/message-log.ts';
export { IDEMPOTENCY_WINDOW_MS, MAX_IDEMPOTENCY_KEY_LENGTH, type AppendOptions } from './contract/idempotency.ts';
export { ForkError, type ForkErrorCode } from './contract/fork.ts';
export type {
  Message,
  SystemMessage,
  UserMessage,
  AssistantMessage,
  ToolMessage,
  ToolCall,
  ContentBlock,
  ContentPart,
  Role,
  Meta,
  JsonValue,
  JsonObject,
  StoredMessage,
} from '../message.ts';
export { StorageError, type StorageErrorCode } from './contract/memory-errors.ts';
export { createInMemoryStore, type InMemoryStoreOptions } from './in-memory/in-memory-store.ts';
export { createLmdbStore, type LmdbStore, type LmdbStoreOptions } from './lmdb/lmdb-store.ts';
export type { LmdbEnvironmentOptions } from './lmdb/lmdb-environment.ts';
export type { ClosableLog } from './standalone-log.ts';
export type { ConditionalClear } from './contract/conditional-clear.ts';
export { validateMessage } from './contract/validate-message.ts';
export { validateConversationId, MAX_CONVERSATION_ID_BYTES } from './contract/validate-input.ts';
export { isoWithOffset, systemWallClock, type WallClock } from '../wall-clock.ts';
export { defaultMemory } from './runtime/default-memory.ts';
