/**
 * `mnemo/mcp`: one user's memory as an MCP server (mcp-server.ts), for any transport of the
 * official SDK; the memory tools' table (memory-tools.ts), which the AI SDK entry shares.
 * `mnemo mcp` serves it over stdio; the HTTP server at `/mcp` (Streamable HTTP).
 *
 * @module mnemo/mcp
 */
export { createMcpServer, FACTS_URI, SESSION_URI_TEMPLATE, sessionUri, type McpServerOptions } from './mcp-server.ts';
export { MEMORY_TOOLS, type MemoryToolDef } from './memory-tools.ts';
export type { MemoryRecall } from './recall-view.ts';
