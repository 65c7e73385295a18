import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MNEMO_BIN, PACKAGE_ROOT } from '../support/cli-process.ts';
import { startTestServer } from '../support/test-server.ts';
import { runCli } from '../support/cli-process.ts';

// An MCP host configured from the MCP guide's snippets (docs/guides/mcp.md), with the SDK's own client: `mnemo mcp` as a
// child process over stdio (its data durable across restarts), and a server's /mcp by URL.

interface HostEntry {
  command?: string;
  args?: string[];
  url?: string;
  headers?: Record<string, string>;
}

/** The `mcpServers.mnemo` entries of the MCP guide's JSON blocks, in order. */
function readmeEntries(): HostEntry[] {
  const readme = readFileSync(join(PACKAGE_ROOT, 'docs', 'guides', 'mcp.md'), 'utf8');
  const blocks = [...readme.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as { mcpServers?: { mnemo?: HostEntry } });
  return blocks.flatMap((b) => (b.mcpServers?.mnemo === undefined ? [] : [b.mcpServers.mnemo]));
}

const TOOLS = ['search_memory', 'remember', 'update_memory', 'forget', 'list_sessions', 'get_session_window', 'get_daily_window'];
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The guide's stdio entry as a host runs it, `npx mnemo` being this checkout's bin. */
function stdioHost(entry: HostEntry, dataDir: string, cwd: string): StdioClientTransport {
  expect(entry.command).toBe('npx');
  const [bin, ...rest] = entry.args!;
  expect(bin).toBe('mnemo');
  const args = rest.map((a, i) => (rest[i - 1] === '--data-dir' ? dataDir : a));
  return new StdioClientTransport({ command: process.execPath, args: [MNEMO_BIN, ...args], cwd, stderr: 'pipe', env: { PATH: process.env['PATH'] ?? '' } });
}

const structured = (r: unknown) => (r as CallToolResult).structuredContent as Record<string, unknown> & { items: Record<string, unknown>[] };

describe('the MCP guide’s host configurations', () => {
  it('has a stdio entry and a URL entry', () => {
    const entries = readmeEntries();
    expect(entries.map((e) => (e.url === undefined ? 'stdio' : 'url'))).toEqual(['stdio', 'url']);
  });

  it('stdio: lists the tools, and remembers across restarts of mnemo mcp', async () => {
    const [entry] = readmeEntries();
    const cwd = mkdtempSync(join(tmpdir(), 'mnemo-mcp-'));
    const dataDir = join(cwd, 'data');
    dirs.push(cwd);

    const first = new Client({ name: 'host', version: '1.0.0' });
    await first.connect(stdioHost(entry!, dataDir, cwd));
    expect((await first.listTools()).tools.map((t) => t.name)).toEqual(TOOLS);
    const stored = structured(await first.callTool({ name: 'remember', arguments: { text: 'my dentist is Dr. Alves', key: 'dentist' } }));
    expect(stored['status']).toBe('added');
    await first.close();

    const second = new Client({ name: 'host', version: '1.0.0' });
    await second.connect(stdioHost(entry!, dataDir, cwd));
    const facts = await second.readResource({ uri: 'mnemo://facts' });
    expect((JSON.parse((facts.contents[0] as { text: string }).text) as { text: string }[]).map((f) => f.text)).toEqual(['my dentist is Dr. Alves']);
    const bad = (await second.callTool({ name: 'search_memory', arguments: { query: 'x', from: 'yesterday' } })) as CallToolResult;
    expect([bad.isError, (bad.structuredContent as { error: { code: string } }).error.code]).toEqual([true, 'invalid_day']);
    await second.close();
  });

  it('stdio: refuses a data directory a running process holds, and bad options', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'mnemo-mcp-'));
    dirs.push(cwd);
    const dataDir = join(cwd, 'data');
    const holder = new Client({ name: 'host', version: '1.0.0' });
    await holder.connect(stdioHost(readmeEntries()[0]!, dataDir, cwd));
    const second = runCli(['mcp', '--data-dir', dataDir, '--user', 'me'], { cwd });
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toContain('data_dir_locked');
    await holder.close();
    const noUser = runCli(['mcp', '--data-dir', dataDir], { cwd });
    expect(await noUser.exited).toBe(2);
    expect(noUser.stderr()).toContain('needs --user');
  });

  it('URL: a running server’s /mcp with a user token', async () => {
    const entry = readmeEntries()[1]!;
    const srv = await startTestServer({ userTokens: { 'tok-me': 'me' } });
    try {
      await srv.recall.chat({ userId: 'me', sessionId: 'plans', message: 'dinner with Ana on Friday' });
      const url = new URL(new URL(entry.url!).pathname, srv.url);
      const headers = Object.fromEntries(Object.entries(entry.headers!).map(([k, v]) => [k, v.replace('<your user token>', 'tok-me')]));
      const client = new Client({ name: 'host', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
      const found = structured(await client.callTool({ name: 'search_memory', arguments: { query: 'dinner Ana' } }));
      expect(found.items[0]).toMatchObject({ session_id: 'plans', message_id: 1 });
      await client.close();
    } finally {
      await srv.close();
    }
  });
});
