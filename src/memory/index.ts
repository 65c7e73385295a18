/**
 * src/memory: the store layer (beamai's ChatMemory). Contracts, the two backends, validation
 * at the boundary, typed errors, and the default store.
 */
export type { ChatMemory, MessageLog, NewEntry, RangeQuery } from './chat-memory.ts';
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
} from './message.ts';
export { StorageError, type StorageErrorCode } from './storage-error.ts';
export { createInMemoryStore, type InMemoryStoreOptions } from './in-memory-store.ts';
export { createLmdbStore, type LmdbStore, type LmdbStoreOptions } from './lmdb-store.ts';
export type { LmdbEnvironmentOptions } from './lmdb-environment.ts';
export type { ClosableLog } from './serial-log.ts';
export { validateMessage } from './validate-message.ts';
export { validateConversationId, MAX_CONVERSATION_ID_BYTES } from './validate-input.ts';
export { isoWithOffset, systemWallClock, type WallClock } from './wall-clock.ts';
export { defaultMemory } from './default-memory.ts';
