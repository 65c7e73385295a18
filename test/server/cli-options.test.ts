import { describe, expect, it } from 'vitest';
import { ConfigError, HELP_TEXT, parseCliOptions } from '../../src/server/index.ts';

const cwd = '/srv/app';

describe('command-line options', () => {
  it('defaults to 127.0.0.1:8000, ./data, no token, config/llm.yaml', () => {
    expect(parseCliOptions([], {}, cwd)).toEqual({
      host: '127.0.0.1',
      port: 8000,
      dataDir: '/srv/app/data',
      token: null,
      llmConfigPath: '/srv/app/config/llm.yaml',
      llmConfigExplicit: false,
      help: false,
      version: false,
    });
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

  it('refuses unknown flags and stray arguments', () => {
    expect(() => parseCliOptions(['--verbose'], {}, cwd)).toThrow(ConfigError);
    expect(() => parseCliOptions(['serve'], {}, cwd)).toThrow(ConfigError);
  });

  it('has a help text naming every flag and environment variable', () => {
    expect(parseCliOptions(['-h'], {}, cwd).help).toBe(true);
    for (const word of ['--host', '--port', '--data-dir', '--token', '--llm-config', 'MNEMO_HOST', 'MNEMO_PORT',
      'MNEMO_DATA_DIR', 'MNEMO_TOKEN', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL']) {
      expect(HELP_TEXT).toContain(word);
    }
  });
});
