import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadUserTokensFile, parseUserTokens, readUserTokensFile } from '../../src/cli/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'mnemo-user-tokens-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the user tokens file', () => {
  it('reads a YAML mapping of token to user id, several tokens per user allowed', () => {
    const { tokens, warnings } = parseUserTokens('"alice-token-0123456789": alice\nbob-token-0123456789ab: bob@example.com\nalice-rotated-0123456789: alice\n', 't.yaml');
    expect([...tokens]).toEqual([
      ['alice-token-0123456789', 'alice'],
      ['bob-token-0123456789ab', 'bob@example.com'],
      ['alice-rotated-0123456789', 'alice'],
    ]);
    expect(warnings).toEqual([]);
  });

  it('reads the same mapping as JSON from a file', () => {
    const path = join(dir, 'tokens.json');
    writeFileSync(path, JSON.stringify({ 'carol-token-0123456789': '张三' }));
    expect([...loadUserTokensFile(path).tokens]).toEqual([['carol-token-0123456789', '张三']]);
  });

  it('warns about a token shorter than 16 characters without printing it', () => {
    const { tokens, warnings } = parseUserTokens('{"short-secret": "dave"}', 't.json');
    expect(tokens.get('short-secret')).toBe('dave');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/"dave".*shorter than 16/);
    expect(warnings[0]).not.toContain('short-secret');
  });

  it('refuses a repeated token, in JSON too, without naming it', () => {
    const attempt = () => parseUserTokens('{"dup-token-0123456789": "a", "dup-token-0123456789": "b"}', 't.json');
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/a token appears twice/);
    expect(attempt).not.toThrow(/dup-token/);
  });

  it('refuses tokens that cannot travel in a header, keys that are not strings, and invalid user ids', () => {
    const bad: [string, RegExp][] = [
      ['{"two words here 0123": "a"}', /printable ASCII/],
      ['{"tøken-0123456789abcdef": "a"}', /printable ASCII/],
      ['12345678901234567890: a\n', /must be a string/],
      ['{"ok-token-0123456789": " alice"}', /user id must not start or end with a space/],
      ['{"ok-token-0123456789": ""}', /user id must not be empty/],
      ['{"ok-token-0123456789": 42}', /user id must be a string/],
      ['{"ok-token-0123456789": "a\\u0000b"}', /control characters/],
    ];
    for (const [text, why] of bad) expect(() => parseUserTokens(text, 't')).toThrow(why);
  });

  it('refuses a file that is not a non-empty mapping, or not JSON or YAML', () => {
    expect(() => parseUserTokens('- a\n- b\n', 't')).toThrow(/must be a mapping/);
    expect(() => parseUserTokens('', 't')).toThrow(/must be a mapping/);
    expect(() => parseUserTokens('{}', 't')).toThrow(/holds no tokens/);
    expect(() => parseUserTokens('{"a": ', 't')).toThrow(/not valid JSON or YAML/);
  });

  it('warns, without a token, when its group or others may read or write it (not when 0600)', () => {
    const path = join(dir, 'modes.yaml');
    writeFileSync(path, 'mode-token-0123456789ab: erin\n');
    const none = { token: null, adminToken: null };
    for (const [mode, warned] of [[0o600, false], [0o400, false], [0o640, true], [0o604, true], [0o620, true]] as const) {
      chmodSync(path, mode);
      const { warnings } = readUserTokensFile(path, none);
      expect(warnings.some((w) => /group or others/.test(w)), mode.toString(8)).toBe(warned);
      expect(warnings.join(' ')).not.toContain('mode-token');
    }
    chmodSync(path, 0o644);
    expect(readUserTokensFile(path, none).warnings).toEqual([expect.stringMatching(/modes\.yaml can be read or written by its group or others \(mode 0644\): .*chmod 600/)]);
  });

  it('refuses a user token that is also the shared or the admin token', () => {
    const path = join(dir, 'same.yaml');
    writeFileSync(path, 'same-token-0123456789ab: erin\n', { mode: 0o600 });
    expect(() => readUserTokensFile(path, { token: 'same-token-0123456789ab', adminToken: null })).toThrow(/must differ from --token and --admin-token/);
    expect(() => readUserTokensFile(path, { token: null, adminToken: 'same-token-0123456789ab' })).toThrow(ConfigError);
  });

  it('refuses a file that cannot be read, naming it', () => {
    expect(() => loadUserTokensFile(join(dir, 'missing.yaml'))).toThrow(/cannot read the user tokens file .*missing\.yaml: ENOENT/);
  });
});
