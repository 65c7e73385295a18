/**
 * The seed's agent-level quick start ("接入 Agent"), with a persistent store: the agent loads
 * the history through its memory provider, sends a window of it, and stores each turn.
 *
 *   npx tsx examples/agent-quickstart.ts [dataDir] [--reset]
 *
 * Run it twice: the second run continues the first one's conversation, kept in LMDB under
 * `<dataDir>/agent-quickstart` (default dataDir: $MNEMO_DATA_DIR or ./data). Without
 * OPENAI_API_KEY the offline fallback answers (and never calls the tool); with it (plus
 * OPENAI_BASE_URL and OPENAI_MODEL for another OpenAI-compatible server) a real model does.
 *
 * It imports `mnemo` as an installed copy would; in this checkout run `npm run build` once first
 * (the package's own name resolves to its dist/). test/docs/examples.test.ts runs it.
 */
import { join } from 'node:path';
import { createAgent, createLmdbStore, defaultProvider, defineTool, llmFromEnv } from 'mnemo';

const args = process.argv.slice(2);
const dataDir = args.find((a) => !a.startsWith('--')) ?? process.env['MNEMO_DATA_DIR'] ?? 'data';

// Your own store (beamai's `{store, Handle}` form would be `memory: { store }`); here windowed
// to the last 50 non-system messages, the seed's `{window, 50}`, on a store that persists.
const store = createLmdbStore({ path: join(dataDir, 'agent-quickstart') });
const agent = createAgent({
  llm: llmFromEnv(),
  memory: defaultProvider(store, 50),
  conversationId: 'agent-demo',
  systemPrompt: 'You are a helpful assistant with memory. Answer briefly.',
  tools: [
    defineTool({
      name: 'current_time',
      description: 'The current date and time, ISO 8601.',
      parameters: { type: 'object', properties: {} },
      execute: async () => new Date().toISOString(),
    }),
  ],
});
if (args.includes('--reset')) await agent.clearMessages();

console.log(`history before this run: ${(await agent.messages()).length} messages`);
for (const text of ['我叫张三', '我叫什么？']) {
  console.log(`> ${text}`);
  const { response, toolCallsMade } = await agent.run(text);
  for (const call of toolCallsMade) console.log(`  (tool ${call.name} -> ${call.result})`);
  console.log(`< ${response.content}`);
}

const history = await agent.messages();
console.log(`history after this run: ${history.length} messages`);
for (const [i, m] of history.entries()) console.log(`  ${i + 1}. ${m.role}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? m)}`);
console.log(`last response: ${(await agent.lastResponse())?.content}`);
await store.close();
