import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfigError,
  DEFAULT_LLM_MAX_RETRIES,
  DEFAULT_LLM_TIMEOUT_MS,
  DEFAULT_MODEL,
  DEFAULT_TEMPERATURE,
  describeLlm,
  loadLlmSettings,
} from '../../src/cli/index.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mnemo-llm-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function configFile(text: string): string {
  const path = join(dir, 'llm.yaml');
  writeFileSync(path, text);
  return path;
}

describe('LLM settings', () => {
  it('uses the offline fallback when there is no file and no environment', () => {
    expect(loadLlmSettings({ configPath: join(dir, 'absent.yaml'), required: false, env: {} })).toEqual({
      kind: 'fallback',
    });
  });

  it('reads the demo file shape llm: { api_key, model, base_url }', () => {
    const path = configFile('llm:\n  api_key: sk-file\n  model: m-file\n  base_url: http://127.0.0.1:9/v1\n');
    expect(loadLlmSettings({ configPath: path, required: true, env: {} })).toEqual({
      kind: 'openai-compatible',
      apiKey: 'sk-file',
      model: 'm-file',
      baseURL: 'http://127.0.0.1:9/v1',
      temperature: 0.2,
      timeoutMs: 60_000,
      maxRetries: 2,
      factsModel: 'm-file',
      keyFrom: 'file',
    });
  });

  it('treats an api_key with no value (YAML null) as no key, unlike the demo', () => {
    const path = configFile('llm:\n  api_key:\n  model: gpt-4o\n');
    expect(loadLlmSettings({ configPath: path, required: true, env: {} }).kind).toBe('fallback');
  });

  it("treats api_key: None (the demo's str(None)) as no key", () => {
    const path = configFile('llm:\n  api_key: None\n  base_url: None\n');
    expect(loadLlmSettings({ configPath: path, required: true, env: {} }).kind).toBe('fallback');
    const withKey = configFile('llm:\n  api_key: sk-file\n  base_url: None\n');
    expect(loadLlmSettings({ configPath: withKey, required: true, env: {} })).toMatchObject({ baseURL: undefined });
  });

  it("reads temperature, timeout and max_retries, defaulting to the demo's 0.2, 60 000 ms and 2", () => {
    const path = configFile('llm:\n  api_key: sk-file\n  temperature: 0.7\n  timeout: 1500\n  max_retries: 0\n');
    expect(loadLlmSettings({ configPath: path, required: true, env: {} })).toMatchObject({
      temperature: 0.7,
      timeoutMs: 1500,
      maxRetries: 0,
    });
    const bare = configFile('llm:\n  api_key: sk-file\n');
    expect(loadLlmSettings({ configPath: bare, required: true, env: {} })).toMatchObject({
      temperature: DEFAULT_TEMPERATURE,
      timeoutMs: DEFAULT_LLM_TIMEOUT_MS,
      maxRetries: DEFAULT_LLM_MAX_RETRIES,
    });
    expect([DEFAULT_TEMPERATURE, DEFAULT_LLM_TIMEOUT_MS, DEFAULT_LLM_MAX_RETRIES]).toEqual([0.2, 60_000, 2]);
  });

  it('lets the command line override the timeout and retries of the file', () => {
    const path = configFile('llm:\n  api_key: sk-file\n  timeout: 1500\n  max_retries: 5\n');
    const settings = loadLlmSettings({ configPath: path, required: true, env: {}, overrides: { timeoutMs: 200, maxRetries: 1 } });
    expect(settings).toMatchObject({ timeoutMs: 200, maxRetries: 1 });
  });

  it('refuses an out-of-range temperature, timeout or max_retries with a ConfigError', () => {
    for (const bad of ['temperature: 3', 'temperature: hot', 'timeout: 0', 'timeout: 1.5', 'max_retries: -1']) {
      const path = configFile(`llm:\n  api_key: sk-file\n  ${bad}\n`);
      expect(() => loadLlmSettings({ configPath: path, required: true, env: {} }), bad).toThrow(ConfigError);
    }
  });

  it('treats an empty or blank api_key as no key', () => {
    const path = configFile('llm:\n  api_key: "  "\n');
    expect(loadLlmSettings({ configPath: path, required: true, env: {} }).kind).toBe('fallback');
  });

  it('defaults the model to gpt-4o-mini and the base URL to OpenAI', () => {
    const path = configFile('llm:\n  api_key: sk-file\n  base_url: ""\n');
    const settings = loadLlmSettings({ configPath: path, required: true, env: {} });
    expect(settings).toMatchObject({ model: DEFAULT_MODEL, baseURL: undefined });
    expect(DEFAULT_MODEL).toBe('gpt-4o-mini');
  });

  it('lets each environment variable override the same setting from the file', () => {
    const path = configFile('llm:\n  api_key: sk-file\n  model: m-file\n  base_url: http://file/v1\n');
    const env = { OPENAI_API_KEY: 'sk-env', OPENAI_MODEL: 'm-env' };
    expect(loadLlmSettings({ configPath: path, required: true, env })).toEqual({
      kind: 'openai-compatible',
      apiKey: 'sk-env',
      model: 'm-env',
      baseURL: 'http://file/v1',
      temperature: 0.2,
      timeoutMs: 60_000,
      maxRetries: 2,
      factsModel: 'm-env',
      keyFrom: 'env',
    });
  });

  it('ignores empty environment variables', () => {
    const path = configFile('llm:\n  api_key: sk-file\n');
    const env = { OPENAI_API_KEY: '', OPENAI_MODEL: '', OPENAI_BASE_URL: '' };
    expect(loadLlmSettings({ configPath: path, required: true, env })).toMatchObject({
      apiKey: 'sk-file',
      model: DEFAULT_MODEL,
      keyFrom: 'file',
    });
  });

  it('works from the environment alone', () => {
    const env = { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' };
    expect(loadLlmSettings({ configPath: join(dir, 'absent.yaml'), required: false, env })).toMatchObject({
      kind: 'openai-compatible',
      baseURL: 'http://127.0.0.1:1/v1',
    });
  });

  it('treats an empty file or a missing llm section as no settings', () => {
    expect(loadLlmSettings({ configPath: configFile(''), required: true, env: {} }).kind).toBe('fallback');
    expect(loadLlmSettings({ configPath: configFile('other: 1\n'), required: true, env: {} }).kind).toBe('fallback');
  });

  it('refuses malformed YAML with a ConfigError', () => {
    const path = configFile('llm: [unclosed\n');
    expect(() => loadLlmSettings({ configPath: path, required: true, env: {} })).toThrow(ConfigError);
  });

  it('refuses a wrongly shaped llm section with a ConfigError', () => {
    expect(() => loadLlmSettings({ configPath: configFile('llm: just-a-string\n'), required: true, env: {} })).toThrow(
      /"llm" must be a mapping/,
    );
    expect(() =>
      loadLlmSettings({ configPath: configFile('llm:\n  api_key: [a, b]\n'), required: true, env: {} }),
    ).toThrow(/llm.api_key must be a string/);
  });

  it('refuses a config path that was asked for but does not exist', () => {
    expect(() => loadLlmSettings({ configPath: join(dir, 'absent.yaml'), required: true, env: {} })).toThrow(
      /not found/,
    );
  });

  it('never puts the key in what it describes for the log', () => {
    const path = configFile('llm:\n  api_key: sk-secret-value\n');
    const described = JSON.stringify(describeLlm(loadLlmSettings({ configPath: path, required: true, env: {} })));
    expect(described).not.toContain('sk-secret-value');
    expect(described).toContain('gpt-4o-mini');
  });
});
