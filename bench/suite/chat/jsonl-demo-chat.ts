import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fallbackReply } from '../../../src/llm/index.ts';
import { buildPromptContext } from '../../../src/recall/index.ts';
import type { JsonValue } from '../../../src/memory/index.ts';
import {
  appendDurably,
  appendMessageRow,
  dumpLine,
  FileLocks,
  localDay,
  localSeconds,
  normalizeRows,
  readRows,
  writeDurably,
} from '../adapters/jsonl-files.ts';
import { pythonJsonDumps } from '../../../src/recall/rows/python-json.ts';
import type { ChatTurns } from './chat-service.ts';

/**
 * The demo's `ChatService.chat` over its folder layout (reference §4), offline:
 * 1. append the user row to `sessions/<s>.jsonl`, then to `daily/<today>.jsonl` (each: read the
 *    whole file for the next id, append, fdatasync);
 * 2. `load_context(session_limit=6, daily_limit=0)`: read the whole session file, keep the last
 *    6 rows; read `memory.md`; build the `[SESSION]`/`[LONG_TERM]` context;
 * 3. the fallback reply;
 * 4. append the assistant row to the session, then to the daily file;
 * 5. append the dialogue-log row (`logs/llm_dialogue.jsonl`);
 * 6. read `conversations.json` for the title (offline title from the first message), then
 *    rewrite it with the title and a fresh `updated_at` (read-modify-write, fdatasync).
 * Files shared by a user's sessions (daily file, log, index) are locked per file in-process,
 * which the demo does not do (it can lose index updates under concurrency).
 */
export function jsonlDemoChat(dir: string): ChatTurns {
  const locks = new FileLocks();
  const userDir = (u: string) => join(dir, 'memory', u);
  return {
    label: 'JSONL (demo)',
    id: 'jsonl',
    async turn(userId, sessionId, message) {
      if (userId.trim() === '' || sessionId.trim() === '') throw new Error('user_id and session_id are required');
      const base = userDir(userId);
      const sessionFile = join(base, 'sessions', `${sessionId}.jsonl`);
      const dailyFile = join(base, 'daily', `${localDay()}.jsonl`);
      await appendMessageRow(locks, sessionFile, { role: 'user', content: message, tag: 'session' });
      await appendMessageRow(locks, dailyFile, { role: 'user', content: message, tag: 'daily' });

      const session = normalizeRows(await readRows(sessionFile)).slice(-6);
      const longTerm = await readText(join(base, 'memory.md'));
      const context = buildPromptContext({
        session: session.map((r) => ({ role: String(r['role']), content: String(r['content']) })),
        daily: [],
        longTerm,
      });
      const reply = fallbackReply(message, context);

      await appendMessageRow(locks, sessionFile, { role: 'assistant', content: reply, tag: 'session' });
      await appendMessageRow(locks, dailyFile, { role: 'assistant', content: reply, tag: 'daily' });
      const logFile = join(base, 'logs', 'llm_dialogue.jsonl');
      await locks.run(logFile, async () => {
        const fresh = (await readText(logFile)) === '';
        const row: Record<string, JsonValue> = {
          ts: localSeconds(),
          session_id: sessionId,
          user_message: message,
          assistant_reply: reply,
          memory_context: context,
          tool_calls: [],
        };
        await appendDurably(logFile, dumpLine(row), fresh);
      });

      const indexFile = join(base, 'conversations.json');
      await locks.run(indexFile, async () => {
        let index: Record<string, JsonValue> = {};
        try {
          const parsed = JSON.parse(await readText(indexFile)) as unknown;
          if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) index = parsed as Record<string, JsonValue>;
        } catch {
          index = {};
        }
        const entry = index[sessionId];
        const existing = typeof entry === 'object' && entry !== null && !Array.isArray(entry) ? entry['title'] : undefined;
        const title = typeof existing === 'string' && existing !== '' ? existing : offlineTitle(message);
        index[sessionId] = { title, updated_at: localSeconds() };
        await writeDurably(indexFile, pythonJsonDumps(index, 2));
      });
      return reply;
    },
    async close() {},
  };
}

async function readText(path: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}

/** The demo's offline title: the first 12 code points of the message, `新对话` when blank. */
function offlineTitle(message: string): string {
  return Array.from(message.trim() || '新对话').slice(0, 12).join('').trim() || '新对话';
}
