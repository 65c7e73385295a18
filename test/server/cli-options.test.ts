import { describe, expect, it } from 'vitest';
import { ConfigError, HELP_TEXT, checkExposure, parseCliOptions } from '../../src/cli/index.ts';
import { isLoopbackHost } from '../../src/server/loopback-host.ts';
import { loadEmbeddingsSettings } from '../../src/cli/embeddings-config.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const cwd = '/srv/app';

describe('command-line options', () => {
  it('defaults to 127.0.0.1:8000, ./data, no token, config/llm.yaml', () => {
    expect(parseCliOptions([], {}, cwd)).toEqual({
      host: '127.0.0.1',
      port: 8000,
      dataDir: '/srv/app/data',
      postgres: null,
      token: null,
      adminToken: null,
      userTokensPath: null,
      trustUserHeader: null,
      allowOpen: false,
      llmConfigPath: '/srv/app/config/llm.yaml',
      llmConfigExplicit: false,
      llmTimeoutMs: undefined,
      llmMaxRetries: undefined,
      requestTimeoutMs: 30_000,
      stopTimeoutMs: 10_000,
      language: 'auto',
      summaryTokens: 500,
      embeddings: {},
      rateLimitPerMinute: 600,
      maxConcurrentTurns: 4,
      recallLimits: {},
      help: false,
      version: false,
    });
  });

  it('reads PostgreSQL storage from --postgres, else MNEMO_DATABASE_URL, else DATABASE_URL, and its schema from --pg-schema or MNEMO_PG_SCHEMA', () => {
    const url = 'postgres://app:secret@db:5432/mnemo';
    expect(parseCliOptions(['--postgres', url], {}, cwd).postgres).toEqual({ url });
    expect(parseCliOptions([], { DATABASE_URL: url }, cwd).postgres).toEqual({ url });
    expect(parseCliOptions([], { DATABASE_URL: 'postgres://other/x', MNEMO_DATABASE_URL: url }, cwd).postgres).toEqual({ url });
    expect(parseCliOptions(['--postgres', url, '--pg-schema', 'tenant_a'], {}, cwd).postgres).toEqual({ url, schema: 'tenant_a' });
    expect(parseCliOptions([], { DATABASE_URL: url, MNEMO_PG_SCHEMA: 'b' }, cwd).postgres).toEqual({ url, schema: 'b' });
    expect(() => parseCliOptions(['--postgres', 'mysql://db/x'], {}, cwd)).toThrow(ConfigError);
    expect(() => parseCliOptions(['--postgres', url, '--pg-schema', 'a-b'], {}, cwd)).toThrow(/--pg-schema/);
    expect(() => parseCliOptions(['--pg-schema', 'a'], {}, cwd)).toThrow(/needs --postgres/);
    expect(HELP_TEXT).toContain('--postgres');
  });

  it('sizes the rolling summaries with --summary-tokens or MNEMO_SUMMARY_TOKENS, off turns them off', () => {
    expect(parseCliOptions(['--summary-tokens', '800'], {}, cwd).summaryTokens).toBe(800);
    expect(parseCliOptions([], { MNEMO_SUMMARY_TOKENS: 'off' }, cwd).summaryTokens).toBeNull();
    expect(parseCliOptions([], {}, cwd).summaryTokens).toBe(500);
    expect(() => parseCliOptions(['--summary-tokens', '0'], {}, cwd)).toThrow(ConfigError);
    expect(() => parseCliOptions(['--summary-tokens', 'lots'], {}, cwd)).toThrow(/invalid --summary-tokens "lots"/);
    expect(HELP_TEXT).toMatch(/--summary-tokens <n\|off>\s+MNEMO_SUMMARY_TOKENS/);
  });

  it('reads the per-user limits from flags or MNEMO_* (0 turns the rate limit off)', () => {
    const argv = ['--rate-limit', '0', '--max-turns', '2', '--max-sessions', '50', '--max-forks', '5', '--max-search-terms', '16'];
    const o = parseCliOptions(argv, {}, cwd);
    expect([o.rateLimitPerMinute, o.maxConcurrentTurns, o.recallLimits]).toEqual([0, 2, { sessionsPerUser: 50, forksPerSession: 5, searchTerms: 16 }]);
    const e = parseCliOptions([], { MNEMO_RATE_LIMIT: '60', MNEMO_MAX_TURNS: '1', MNEMO_MAX_SESSIONS: '9' }, cwd);
    expect([e.rateLimitPerMinute, e.maxConcurrentTurns, e.recallLimits]).toEqual([60, 1, { sessionsPerUser: 9 }]);
    for (const bad of [['--max-turns', '0'], ['--max-sessions', '0'], ['--rate-limit', '-1'], ['--max-forks', 'many']]) {
      expect(() => parseCliOptions(bad, {}, cwd)).toThrow(ConfigError);
    }
    expect(HELP_TEXT).toContain('--max-search-terms');
  });

  it('reads the embeddings model, endpoint, dimensions and rate from flags or MNEMO_EMBEDDINGS_*', () => {
    const argv = ['--embeddings-model', 'text-embedding-3-small', '--embeddings-base-url', 'http://127.0.0.1:9/v1', '--embeddings-dimensions', '256', '--embeddings-rpm', '30'];
    expect(parseCliOptions(argv, {}, cwd).embeddings).toEqual({ model: 'text-embedding-3-small', baseURL: 'http://127.0.0.1:9/v1', dimensions: 256, requestsPerMinute: 30 });
    expect(parseCliOptions([], { MNEMO_EMBEDDINGS_MODEL: 'm', MNEMO_EMBEDDINGS_RPM: '5' }, cwd).embeddings).toEqual({ model: 'm', requestsPerMinute: 5 });
    expect(() => parseCliOptions(['--embeddings-rpm', '0'], {}, cwd)).toThrow(ConfigError);
  });

  it('takes the embeddings section of llm.yaml, the chat\'s base URL and key by default, and none without a model', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-embcfg-'));
    try {
      const path = join(dir, 'llm.yaml');
      writeFileSync(path, 'llm:\n  api_key: sk-chat\n  base_url: http://chat/v1\nembeddings:\n  model: e5\n  dimensions: 64\n  batch_size: 8\n');
      expect(loadEmbeddingsSettings({ configPath: path, env: {} })).toEqual({ model: 'e5', baseURL: 'http://chat/v1', apiKey: 'sk-chat', dimensions: 64, batchSize: 8 });
      expect(loadEmbeddingsSettings({ configPath: path, env: { OPENAI_BASE_URL: 'http://env/v1', MNEMO_EMBEDDINGS_API_KEY: 'sk-e' }, overrides: { model: 'flag-model' } })).toEqual({
        model: 'flag-model',
        baseURL: 'http://env/v1',
        apiKey: 'sk-e',
        dimensions: 64,
        batchSize: 8,
      });
      writeFileSync(path, 'llm:\n  api_key: sk-chat\n');
      expect(loadEmbeddingsSettings({ configPath: path, env: {} })).toBeUndefined();
      writeFileSync(path, 'embeddings:\n  model: e5\n  dimensions: -1\n');
      expect(() => loadEmbeddingsSettings({ configPath: path, env: {} })).toThrow(ConfigError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads the model timeout and retries, the request timeout and the stop deadline from flags or MNEMO_*', () => {
    const argv = ['--llm-timeout', '1500', '--llm-max-retries', '0', '--request-timeout', '250', '--stop-timeout', '0'];
    expect(parseCliOptions(argv, {}, cwd)).toMatchObject({
      llmTimeoutMs: 1500,
      llmMaxRetries: 0,
      requestTimeoutMs: 250,
      stopTimeoutMs: 0,
    });
    const env = { MNEMO_LLM_TIMEOUT: '900', MNEMO_LLM_MAX_RETRIES: '4', MNEMO_REQUEST_TIMEOUT: '5000', MNEMO_STOP_TIMEOUT: '200' };
    expect(parseCliOptions([], env, cwd)).toMatchObject({
      llmTimeoutMs: 900,
      llmMaxRetries: 4,
      requestTimeoutMs: 5000,
      stopTimeoutMs: 200,
    });
  });

  it('reads the language from --language or MNEMO_LANGUAGE, the flag first, auto by default, and refuses any but zh, en and auto', () => {
    expect(parseCliOptions(['--language', 'en'], {}, cwd).language).toBe('en');
    expect(parseCliOptions([], { MNEMO_LANGUAGE: 'en' }, cwd).language).toBe('en');
    expect(parseCliOptions(['--language', 'zh'], { MNEMO_LANGUAGE: 'en' }, cwd).language).toBe('zh');
    expect(parseCliOptions([], { MNEMO_LANGUAGE: '' }, cwd).language).toBe('auto');
    expect(parseCliOptions([], {}, cwd).language).toBe('auto');
    expect(() => parseCliOptions(['--language', 'fr'], {}, cwd)).toThrow(/invalid --language "fr": use one of zh, en, auto/);
    expect(HELP_TEXT).toMatch(/--language <zh\|en\|auto>\s+MNEMO_LANGUAGE/);
  });

  it('refuses a timeout or retry count that is not a whole number in range', () => {
    for (const argv of [['--llm-timeout', '0'], ['--llm-timeout', '1.5'], ['--llm-max-retries', '-1'],
      ['--request-timeout', '0'], ['--stop-timeout', 'soon']]) {
      expect(() => parseCliOptions(argv, {}, cwd), argv.join(' ')).toThrow(ConfigError);
    }
  });

  it('reads MNEMO_HOST, MNEMO_PORT, MNEMO_DATA_DIR, MNEMO_TOKEN and MNEMO_LLM_CONFIG', () => {
    const env = {
      MNEMO_HOST: '0.0.0.0',
      MNEMO_PORT: '9000',
      MNEMO_DATA_DIR: 'state',
      MNEMO_TOKEN: 's3cret',
      MNEMO_LLM_CONFIG: '/etc/mnemo/llm.yaml',
    };
    expect(parseCliOptions([], env, cwd)).toMatchObject({
      host: '0.0.0.0',
      port: 9000,
      dataDir: '/srv/app/state',
      token: 's3cret',
      llmConfigPath: '/etc/mnemo/llm.yaml',
      llmConfigExplicit: true,
    });
  });

  it('lets flags win over the environment', () => {
    const env = { MNEMO_HOST: '0.0.0.0', MNEMO_PORT: '9000', MNEMO_DATA_DIR: 'state', MNEMO_TOKEN: 'env-token' };
    const argv = ['--host', '::1', '--port', '0', '--data-dir', '/var/mnemo', '--token', 'flag-token'];
    expect(parseCliOptions(argv, env, cwd)).toMatchObject({
      host: '::1',
      port: 0,
      dataDir: '/var/mnemo',
      token: 'flag-token',
    });
  });

  it('treats empty environment variables as unset', () => {
    expect(parseCliOptions([], { MNEMO_PORT: '', MNEMO_TOKEN: '' }, cwd)).toMatchObject({ port: 8000, token: null });
  });

  it('refuses a port that is not an integer from 0 to 65535', () => {
    for (const port of ['-1', '65536', '80a', '1.5', ' ']) {
      expect(() => parseCliOptions(['--port', port], {}, cwd)).toThrow(ConfigError);
    }
  });

  it('refuses a token with spaces or control characters', () => {
    expect(() => parseCliOptions(['--token', 'two words'], {}, cwd)).toThrow(/printable ASCII/);
  });

  it('reads the admin token from --admin-token, else MNEMO_ADMIN_TOKEN, and refuses one equal to the API token', () => {
    expect(parseCliOptions([], { MNEMO_ADMIN_TOKEN: 'ops-env' }, cwd).adminToken).toBe('ops-env');
    expect(parseCliOptions(['--admin-token', 'ops-flag'], { MNEMO_ADMIN_TOKEN: 'ops-env' }, cwd).adminToken).toBe('ops-flag');
    expect(() => parseCliOptions(['--admin-token', 'same', '--token', 'same'], {}, cwd)).toThrow(/differ/);
    expect(() => parseCliOptions(['--admin-token', 'two words'], {}, cwd)).toThrow(/printable ASCII/);
  });

  it('reads --user-tokens (resolved against the working directory), --trust-user-header and --allow-open', () => {
    expect(parseCliOptions(['--user-tokens', 'tokens.yaml'], {}, cwd).userTokensPath).toBe('/srv/app/tokens.yaml');
    expect(parseCliOptions([], { MNEMO_USER_TOKENS: '/etc/mnemo/tokens.json' }, cwd).userTokensPath).toBe('/etc/mnemo/tokens.json');
    const proxied = parseCliOptions(['--trust-user-header', 'X-Forwarded-User', '--token', 'proxy-secret'], {}, cwd);
    expect(proxied.trustUserHeader).toBe('X-Forwarded-User');
    expect(parseCliOptions(['--allow-open'], {}, cwd).allowOpen).toBe(true);
  });

  it('refuses trusted-header mode without --token, and a header name that is not one', () => {
    expect(() => parseCliOptions(['--trust-user-header', 'X-Forwarded-User'], {}, cwd)).toThrow(/needs --token/);
    for (const name of ['X Forwarded', 'Authorization', 'host', '']) {
      expect(() => parseCliOptions(['--trust-user-header', name, '--token', 'proxy-secret'], {}, cwd)).toThrow(ConfigError);
    }
  });

  it('refuses a non-loopback host with the API open unless --allow-open', () => {
    const open = parseCliOptions(['--host', '0.0.0.0'], {}, cwd);
    expect(() => checkExposure(open, 0, isLoopbackHost)).toThrow(/refusing to listen on 0\.0\.0\.0.*--allow-open/);
    // An admin token alone leaves the API open, so it does not count.
    expect(() => checkExposure(parseCliOptions(['--host', '0.0.0.0', '--admin-token', 'ops'], {}, cwd), 0, isLoopbackHost)).toThrow(ConfigError);
    expect(() => checkExposure(parseCliOptions(['--host', '0.0.0.0', '--allow-open'], {}, cwd), 0, isLoopbackHost)).not.toThrow();
    expect(() => checkExposure(parseCliOptions(['--host', '0.0.0.0', '--token', 'shared'], {}, cwd), 0, isLoopbackHost)).not.toThrow();
    expect(() => checkExposure(open, 2, isLoopbackHost)).not.toThrow();
    for (const host of ['127.0.0.1', 'localhost', '::1']) {
      expect(() => checkExposure(parseCliOptions(['--host', host], {}, cwd), 0, isLoopbackHost)).not.toThrow();
    }
  });

  it('refuses unknown flags and stray arguments', () => {
    expect(() => parseCliOptions(['--verbose'], {}, cwd)).toThrow(ConfigError);
    expect(() => parseCliOptions(['serve'], {}, cwd)).toThrow(ConfigError);
  });

  it('has a help text naming every flag and environment variable', () => {
    expect(parseCliOptions(['-h'], {}, cwd).help).toBe(true);
    for (const word of ['--host', '--port', '--data-dir', '--token', '--admin-token', 'MNEMO_ADMIN_TOKEN', '--user-tokens', 'MNEMO_USER_TOKENS',
      '--trust-user-header', 'MNEMO_TRUST_USER_HEADER', '--allow-open', '--llm-config', 'MNEMO_HOST', 'MNEMO_PORT',
      'MNEMO_DATA_DIR', 'MNEMO_TOKEN', 'MNEMO_LOG_LEVEL', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL', '--llm-timeout',
      'MNEMO_LLM_TIMEOUT', '--llm-max-retries', 'MNEMO_LLM_MAX_RETRIES', '--request-timeout', 'MNEMO_REQUEST_TIMEOUT',
      '--stop-timeout', 'MNEMO_STOP_TIMEOUT', 'llm.temperature']) {
      expect(HELP_TEXT).toContain(word);
    }
  });
});
