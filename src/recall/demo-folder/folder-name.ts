import { InvalidInputError } from '../../errors.ts';

/**
 * How an id becomes a folder or file name in the demo's layout (export, import), and back.
 *
 * A name keeps every character of the id except `/ \ % : * ? " < > |` and a leading `.`, which
 * are written as `%XX` per UTF-8 byte (uppercase hex). So `..`, `/`, `\` and NUL (not an id
 * character anyway) never reach the file system, a leading dot cannot hide a folder, and the
 * demo's usual ids (ASCII letters, digits, `_`, `-`, `.` inside, `@`, spaces inside, Chinese
 * and other letters) are their own names, so a demo folder round-trips byte for byte.
 *
 * Decoding accepts only names this encoding produces (canonical `%XX`), so two names never
 * decode to one id; anything else is `null`.
 */
const UNSAFE = /[/\\%:*?"<>|]/u;

/** Longest file name most file systems take (ext4, APFS, NTFS: 255 bytes or units). */
export const MAX_NAME_BYTES = 255;

export function encodeFolderName(id: string): string {
  let out = '';
  let first = true;
  for (const ch of id) {
    out += UNSAFE.test(ch) || (first && ch === '.') ? percent(ch) : ch;
    first = false;
  }
  return out;
}

/** The id a name encodes, or `null` when the name is not one `encodeFolderName` writes. */
export function decodeFolderName(name: string): string | null {
  if (!name.includes('%')) return encodeFolderName(name) === name ? name : null;
  const bytes: number[] = [];
  const parts: (string | Uint8Array)[] = [];
  const flush = () => {
    if (bytes.length > 0) parts.push(Uint8Array.from(bytes.splice(0)));
  };
  for (let i = 0; i < name.length; ) {
    if (name[i] === '%') {
      const hex = name.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) return null;
      bytes.push(Number.parseInt(hex, 16));
      i += 3;
    } else {
      flush();
      const ch = String.fromCodePoint(name.codePointAt(i)!);
      parts.push(ch);
      i += ch.length;
    }
  }
  flush();
  let id = '';
  try {
    const decoder = new TextDecoder('utf-8', { fatal: true });
    for (const p of parts) id += typeof p === 'string' ? p : decoder.decode(p);
  } catch {
    return null;
  }
  return encodeFolderName(id) === name ? id : null;
}

/** `name` as a file name, or `invalid_id` when it is too long for one. */
export function checkNameLength(name: string, id: string): string {
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) {
    throw new InvalidInputError('invalid_id', `id ${JSON.stringify(id.slice(0, 40))}... makes a file name longer than ${MAX_NAME_BYTES} bytes`, {
      id,
    });
  }
  return name;
}

function percent(ch: string): string {
  return [...Buffer.from(ch, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}
