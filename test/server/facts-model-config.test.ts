import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadLlmSettings, modelServices, parseCliOptions } from '../../src/cli/index.ts';
import { completion, startChatServer, type ChatServer } from '../support/chat-completions-stub.ts';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';

// The `mnemo` command's facts model: from its options and config file to the recall service's
// `factsLlm`, asked by background extraction over a real chat-completions endpoint on loopback.

let dir: string;
let stub: ChatServer;
let fx: RecallFixture | undefined;

/** The extraction's requests: their system prompt asks for `{"facts": ...}`. */
const isExtraction = (body: Record<string, unknown>): boolean => {
  const first = (body['messages'] as { role: string; content: string }[])[0]!;
  return first.role === 'system' && first.content.includes('{"facts": [');
};

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mnemo-facts-model-'));
  stub = await startChatServer((body) =>
    completion({ content: isExtraction(body) ? '{"facts": [{"text": "likes green tea", "key": "drink"}]}' : 'ok' }),
  );
});
afterEach(async () => {
  await fx?.close();
  fx = undefined;
  await stub.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What `mnemo` does with `args`, `env` and `config/llm.yaml` (main.ts), then one turn. */
async function turnThroughCli(args: string[], env: Record<string, string>, yaml?: string) {
  if (yaml !== undefined) {
    mkdirSync(join(dir, 'config'), { recursive: true });
    writeFileSync(join(dir, 'config', 'llm.yaml'), yaml);
  }
  const options = parseCliOptions(args, env, dir);
  const settings = loadLlmSettings({
    configPath: options.llmConfigPath,
    required: options.llmConfigExplicit,
    env,
    overrides: { timeoutMs: options.llmTimeoutMs, maxRetries: options.llmMaxRetries, factsModel: options.factsModel },
  });
  const models = modelServices(settings);
  fx = openRecall({ ...models, language: options.language });
  await fx.recall.chat({ userId: 'u', sessionId: 's', message: 'I only drink green tea' });
  await fx.recall.extractionIdle();
  return { settings, models, extractions: stub.requests.filter((r) => isExtraction(r.body)).map((r) => r.body) };
}

const keyed = (base: string) => `llm:\n  api_key: sk-test\n  model: chat-model\n  base_url: ${base}\n`;

describe('the facts model of the mnemo command', () => {
  it('is the configured chat model by default: a finished turn is extracted by asking it, at temperature 0', async () => {
    const { settings, extractions } = await turnThroughCli([], {}, keyed(stub.baseURL));
    expect(settings).toMatchObject({ model: 'chat-model', factsModel: 'chat-model' });
    expect(extractions).toHaveLength(1);
    expect(extractions[0]).toMatchObject({ model: 'chat-model', temperature: 0 });
    expect((await fx!.recall.listMemory('u')).map((e) => [e.text, e.key, e.source.via])).toEqual([['likes green tea', 'drink', 'extraction']]);
  });

  it('takes another model from --facts-model, MNEMO_FACTS_MODEL or llm.facts_model (flag over variable over file)', async () => {
    const file = `${keyed(stub.baseURL)}  facts_model: file-model\n`;
    expect((await turnThroughCli([], {}, file)).extractions[0]).toMatchObject({ model: 'file-model' });
    await fx!.close();
    expect((await turnThroughCli([], { MNEMO_FACTS_MODEL: 'env-model' }, file)).extractions.at(-1)).toMatchObject({ model: 'env-model' });
    await fx!.close();
    const last = await turnThroughCli(['--facts-model', 'flag-model'], { MNEMO_FACTS_MODEL: 'env-model' }, file);
    expect(last.extractions.at(-1)).toMatchObject({ model: 'flag-model' });
    // The replies keep the chat model.
    expect(stub.requests.filter((r) => !isExtraction(r.body)).every((r) => r.body['model'] === 'chat-model')).toBe(true);
  });

  it('is off with facts_model: off (or false, or --facts-model off): keys and duplicate rules only, no extraction', async () => {
    for (const [args, yaml] of [
      [[], `${keyed(stub.baseURL)}  facts_model: off\n`],
      [[], `${keyed(stub.baseURL)}  facts_model: false\n`],
      [['--facts-model', 'off'], keyed(stub.baseURL)],
    ] as const) {
      const run = await turnThroughCli([...args], {}, yaml);
      expect(run.settings).toMatchObject({ factsModel: null });
      expect(run.models.factsLlm).toBeUndefined();
      expect(run.extractions).toEqual([]);
      expect(await fx!.recall.listMemory('u')).toEqual([]);
      await fx!.close();
      fx = undefined;
    }
    expect(stub.requests.length).toBeGreaterThan(0);
  });

  it('does not exist offline (no key): replies and facts on the rules alone, no request', async () => {
    const run = await turnThroughCli(['--facts-model', 'other'], {});
    expect(run.settings).toEqual({ kind: 'fallback' });
    expect(run.models).toEqual({});
    expect(stub.requests).toEqual([]);
  });

  it('refuses a blank --facts-model and a facts_model that is not a name', () => {
    expect(() => parseCliOptions(['--facts-model', ' '], {}, dir)).toThrow(ConfigError);
    mkdirSync(join(dir, 'config'), { recursive: true });
    writeFileSync(join(dir, 'config', 'llm.yaml'), 'llm:\n  api_key: k\n  facts_model: [a]\n');
    expect(() => loadLlmSettings({ configPath: join(dir, 'config', 'llm.yaml'), required: true, env: {} })).toThrow(/facts_model/);
  });
});

describe('extraction over a failing endpoint', () => {
  it('a job the endpoint fails twice (500) is retried and extracted; one it always fails is dead-lettered while later turns go on', async () => {
    await stub.close();
    let failures = 0;
    stub = await startChatServer((body) => {
      if (!isExtraction(body)) return completion({ content: 'ok' });
      const turn = JSON.stringify(body['messages']);
      if (turn.includes('poison') || failures++ < 2) return { status: 500, body: { error: { message: 'upstream down' } } };
      return completion({ content: '{"facts": [{"text": "likes green tea", "key": "drink"}]}' });
    });
    const options = parseCliOptions(['--llm-max-retries', '0'], { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: stub.baseURL }, dir);
    const settings = loadLlmSettings({
      configPath: options.llmConfigPath,
      required: false,
      env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: stub.baseURL },
      overrides: { maxRetries: options.llmMaxRetries, factsModel: options.factsModel },
    });
    fx = openRecall({ ...modelServices(settings), extraction: { maxAttempts: 4, backoffMs: 0 } });
    await fx.recall.chat({ userId: 'u', sessionId: 's', message: 'poison' });
    await fx.recall.chat({ userId: 'u', sessionId: 's', message: 'I only drink green tea' });
    await fx.recall.extractionIdle();
    expect((await fx.recall.listMemory('u')).map((e) => e.text)).toEqual(['likes green tea']);
    const status = await fx.recall.extractionStatus();
    expect(status).toMatchObject({ pending: 0, dead: 1 });
    expect(status.deadJobs[0]).toMatchObject({ replyId: 2, attempts: 4 });
    expect(status.deadJobs[0]!.lastError).toEqual({ code: 'llm_unavailable', message: 'the model provider is unavailable; try again later' });
    // 4 attempts of the poison job, 2 failed and 1 good of the other.
    expect(stub.requests.filter((r) => isExtraction(r.body))).toHaveLength(7);
  });
});

