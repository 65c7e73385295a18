/**
 * One user's memory as an MCP server (the official `@modelcontextprotocol/sdk`), over any
 * transport: stdio for a desktop agent host (`mnemo mcp`, src/cli/mcp-command.ts), Streamable
 * HTTP at the server's `/mcp` (src/server/mcp-route.ts).
 *
 * - Tools: the memory tools of memory-tools.ts (`search_memory`, `remember`, `update_memory`,
 *   `forget`, `list_sessions`, `get_session_window`, `get_daily_window`), bound to `userId`.
 *   Their input schemas are listed as written there (JSON Schema) and the arguments go to recall
 *   unchanged: recall checks them, so a bad one is refused with the library's code. A result
 *   carries its JSON both as `structuredContent` and as the text of its one content block. A
 *   refused or failed call is a tool error (`isError: true`) whose structured content is
 *   `{error: {code, message}}` (the `MnemoError`'s code and Mnemo's own sentence; an error from
 *   outside Mnemo is `internal_error` with a fixed sentence, its text never sent).
 * - Resources: `mnemo://facts`, the user's current long-term facts (JSON), and
 *   `mnemo://sessions/{session_id}`, one session's transcript (JSON rows, chronological;
 *   listed for the user's 100 most recent sessions). A bad session id is a JSON-RPC
 *   InvalidParams error carrying the library's code in `data.code`.
 *
 * The user id is checked once, here (recall-ids.ts: `InvalidInputError` `invalid_id`). The
 * server owns nothing: closing it (or its transport) leaves the recall service running.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errorRecord, InvalidInputError, MnemoError } from '../errors.ts';
import type { JsonObject } from '../message.ts';
import { assertUserId } from '../recall/recall-ids.ts';
import { mnemoVersion } from '../version.ts';
import { MEMORY_TOOLS } from './memory-tools.ts';
import { currentFacts, newestSessions, sessionTranscript, type MemoryRecall } from './recall-view.ts';

/** What `createMcpServer` takes. */
export interface McpServerOptions {
  /** The recall service it serves (a running runtime's `runtime.recall`). Not owned: never closed. */
  recall: MemoryRecall;
  /** The one user whose memory this server serves. */
  userId: string;
}

/** The resource of the user's current long-term facts (JSON). */
export const FACTS_URI = 'mnemo://facts';
/** The URI template of one session's transcript (JSON rows, chronological); see `sessionUri`. */
export const SESSION_URI_TEMPLATE = 'mnemo://sessions/{session_id}';
const LISTED_SESSIONS = 100;

/**
 * An MCP server of `userId`'s memory: the memory tools (`MEMORY_TOOLS`) and the facts and session
 * resources (see above). Connect it to any transport of the SDK (`await server.connect(transport)`).
 *
 * @throws `InvalidInputError` `invalid_id` for an unusable `userId`.
 */
export function createMcpServer(options: McpServerOptions): McpServer {
  const { recall } = options;
  const userId = assertUserId(options.userId);
  const mcp = new McpServer(
    { name: 'mnemo', title: 'Mnemo memory', version: mnemoVersion() },
    { instructions: 'Long-term memory of one user: search past conversations with search_memory, keep facts with remember, and read around a hit with get_session_window or get_daily_window.' },
  );

  // Tools through the protocol's own handlers: the schemas listed are memory-tools.ts' JSON
  // Schemas, and recall (not a schema library) checks what arrives.
  mcp.server.registerCapabilities({ tools: {} });
  mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: MEMORY_TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: { title: t.title, readOnlyHint: t.readOnly, destructiveHint: t.name === 'forget', idempotentHint: t.readOnly, openWorldHint: false },
    })),
  }));
  mcp.server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = MEMORY_TOOLS.find((t) => t.name === request.params.name);
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `no tool named ${JSON.stringify(request.params.name)}`);
    try {
      return toolResult(await tool.run(recall, userId, request.params.arguments ?? {}));
    } catch (error) {
      return toolError(error);
    }
  });

  mcp.registerResource(
    'facts',
    FACTS_URI,
    { title: 'Long-term facts', description: 'The user\'s current long-term facts, as JSON.', mimeType: 'application/json' },
    async (uri) => json(uri.href, await resourceCall(() => currentFacts(recall, userId))),
  );
  mcp.registerResource(
    'session',
    new ResourceTemplate(SESSION_URI_TEMPLATE, {
      list: async () => ({
        resources: (await newestSessions(recall, userId, LISTED_SESSIONS)).map((s) => ({
          uri: sessionUri(s.sessionId),
          name: s.title === '' ? s.sessionId : s.title,
          mimeType: 'application/json',
        })),
      }),
    }),
    { title: 'Session transcript', description: 'One session\'s rows, chronological, as JSON.', mimeType: 'application/json' },
    async (uri, variables) => {
      const raw = variables['session_id'];
      const sessionId = decodeURIComponent(Array.isArray(raw) ? raw.join('/') : (raw ?? ''));
      return json(uri.href, await resourceCall(() => sessionTranscript(recall, userId, sessionId)));
    },
  );
  return mcp;
}

/** The resource URI of session `sessionId`'s transcript (the id percent-encoded). */
export function sessionUri(sessionId: string): string {
  return `mnemo://sessions/${encodeURIComponent(sessionId)}`;
}

function toolResult(data: JsonObject): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data };
}

function toolError(error: unknown): CallToolResult {
  const record = error instanceof MnemoError ? errorRecord(error, 'internal_error') : { code: 'internal_error', message: 'the call failed inside Mnemo' };
  return { isError: true, content: [{ type: 'text', text: `${record.code}: ${record.message}` }], structuredContent: { error: { ...record } } };
}

/** A resource read: recall's refusal of its input is the protocol's InvalidParams, with the code. */
async function resourceCall<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof InvalidInputError) throw new McpError(ErrorCode.InvalidParams, error.message, { code: error.code });
    throw error;
  }
}

function json(uri: string, value: unknown) {
  return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value) }] };
}
