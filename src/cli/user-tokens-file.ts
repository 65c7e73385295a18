/**
 * The `--user-tokens` file: a JSON or YAML mapping of token → user id, read at start and again
 * on SIGHUP (serve.ts; a file that fails to read keeps the tokens already in use).
 *
 *   # tokens.yaml
 *   "3f0c9a1e6b2d4c8f9e7a": alice
 *   "b81d2e4f6a0c3e5d7f91": bob@example.com
 *
 * Each token must be printable ASCII without spaces (it travels in an HTTP header) and appear
 * once (a repeated key is refused, in JSON too: the file is read with the YAML parser, and JSON
 * is YAML); each user id must be a valid id (recall-ids.ts). One user may have several tokens
 * (rotation). A YAML key that is not a string (`123:` unquoted) is refused. A token shorter
 * than 16 characters is accepted with a warning, and so is a file its group or others may read
 * or write (its tokens are secrets: `chmod 600`). A bad file is a `ConfigError` naming the
 * problem (never a token's text): at start `mnemo` exits 2.
 */
import { readFileSync, statSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { idProblem } from '../recall/recall-ids.ts';
import { ConfigError } from './cli-errors.ts';

export const RECOMMENDED_TOKEN_CHARS = 16;
const TOKEN = /^[\x21-\x7e]+$/;

export interface UserTokens {
  /** Token → user id. */
  tokens: Map<string, string>;
  /** Things worth telling the operator (short tokens), without the tokens themselves. */
  warnings: string[];
}

export function loadUserTokensFile(path: string): UserTokens {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read the user tokens file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parseUserTokens(text, path);
}

/**
 * What `mnemo` reads: the file (`loadUserTokensFile`), each token checked against the shared
 * and the admin token, and a warning when the file's mode lets its group or others in.
 */
export function readUserTokensFile(path: string, others: { token: string | null; adminToken: string | null }): UserTokens {
  const loaded = loadUserTokensFile(path);
  for (const secret of loaded.tokens.keys()) {
    if (secret === others.token || secret === others.adminToken) throw new ConfigError('a user token must differ from --token and --admin-token');
  }
  const exposed = modeWarning(path);
  return exposed === null ? loaded : { tokens: loaded.tokens, warnings: [exposed, ...loaded.warnings] };
}

/** A warning when `path` may be read or written by its group or others (not on Windows, which has no such bits). */
export function modeWarning(path: string): string | null {
  if (process.platform === 'win32') return null;
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return null;
  }
  if ((mode & 0o066) === 0) return null;
  return `the user tokens file ${path} can be read or written by its group or others (mode ${mode.toString(8).padStart(4, '0')}): its tokens are secrets, chmod 600 it`;
}

export function parseUserTokens(text: string, source: string): UserTokens {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    // A duplicate key's message quotes the key, which is a token here: say only what is wrong.
    const why = first.code === 'DUPLICATE_KEY' ? 'a token appears twice' : `not valid JSON or YAML (${first.code})`;
    throw new ConfigError(`the user tokens file ${source}: ${why}`);
  }
  // As a Map, so a YAML key that is not a string (`123:`, `true:`) is seen as such, not stringified.
  const value: unknown = doc.toJS({ mapAsMap: true });
  if (!(value instanceof Map)) throw new ConfigError(`the user tokens file ${source} must be a mapping of token to user id`);
  const entries = [...(value as Map<unknown, unknown>)];
  if (entries.length === 0) throw new ConfigError(`the user tokens file ${source} holds no tokens`);
  const tokens = new Map<string, string>();
  const warnings: string[] = [];
  entries.forEach(([token, userId], index) => {
    const where = `the user tokens file ${source}, entry ${index + 1}`;
    if (typeof token !== 'string') throw new ConfigError(`${where}: a token must be a string (quote it in YAML)`);
    if (!TOKEN.test(token)) throw new ConfigError(`${where}: a token must be printable ASCII without spaces (it travels in an HTTP header)`);
    const problem = idProblem(userId);
    if (problem !== null) throw new ConfigError(`${where}: the user id ${problem}`);
    if (token.length < RECOMMENDED_TOKEN_CHARS) {
      warnings.push(`${where} (user ${JSON.stringify(userId)}): the token is shorter than ${RECOMMENDED_TOKEN_CHARS} characters; use a long random one`);
    }
    tokens.set(token, userId as string);
  });
  return { tokens, warnings };
}
