/**
 * The seed's kernel-level quick start ("快速开始（Kernel 级）"), with a persistent store:
 * memory is a filter, put first in the kernel's filter list, and each invoke passes only the
 * newest message; the conversation id says whose history to expand.
 *
 *   npx tsx examples/kernel-quickstart.ts [dataDir] [--reset]
 *
 * Run it twice: the second run's model is sent the first run's history too, because it lives
 * in LMDB under `<dataDir>/kernel-quickstart` (default dataDir: $MNEMO_DATA_DIR or ./data).
 * Without OPENAI_API_KEY the offline fallback answers; with it (plus OPENAI_BASE_URL and
 * OPENAI_MODEL for another OpenAI-compatible server) a real model does.
 *
 * It imports `mnemo` as an installed copy would; in this checkout run `npm run build` once first
 * (the package's own name resolves to its dist/). test/docs/examples.test.ts runs it.
 */
import { join } from 'node:path';
import { createFilter, createKernel, createLmdbStore, llmFromEnv, memoryFilter, newContext, withConversationId } from 'mnemo';

const args = process.argv.slice(2);
const dataDir = args.find((a) => !a.startsWith('--')) ?? process.env['MNEMO_DATA_DIR'] ?? 'data';

// 1. A session store that survives restarts.
const store = createLmdbStore({ path: join(dataDir, 'kernel-quickstart') });
if (args.includes('--reset')) await store.clear('session-1');

// 2. A kernel with memory as the first (outermost) filter. The second filter only shows
//    what the model is sent: the history the memory filter expanded.
const show = createFilter('show', {
  aroundChat(request, _state, next) {
    console.log(`  (the model is sent ${request.messages.length} messages)`);
    return next(request);
  },
});
const kernel = createKernel({ llm: llmFromEnv(), filters: [memoryFilter(store), show] });

// 3. The conversation id names the session; each invoke passes only the newest message.
const context = withConversationId(newContext(), 'session-1');
console.log(`history before this run: ${(await store.get('session-1')).length} messages`);
for (const text of ['我叫张三', '我叫什么？']) {
  console.log(`> ${text}`);
  const { response } = await kernel.invoke([{ role: 'user', content: text }], { context });
  console.log(`< ${response.content}`);
}

// 4. Read the history back (store.clear('session-1') would forget it).
const history = await store.get('session-1');
console.log(`history after this run: ${history.length} messages`);
for (const [i, m] of history.entries()) console.log(`  ${i + 1}. ${m.role}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`);
await store.close();
