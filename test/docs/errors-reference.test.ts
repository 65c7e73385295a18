import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './docs-pages.ts';
import { literalsOf, publicApi, type PublicApi } from './public-api.ts';

// docs/reference/errors.md against the code: every error class a public entry point exports
// (a subclass of MnemoError) has a row, from the right entry, holding every code the class can
// carry: the literals its `code` property's type allows (for a generic code, such as
// InvalidInputError's, also those its `new X('code', ...)` call sites pass anywhere in src/). A row for a class that no entry exports fails too.

const PAGE = readFileSync(join(ROOT, 'docs', 'reference', 'errors.md'), 'utf8');

/** class name → { from, codes } of the page's first table. */
function documented(): Map<string, { from: string; codes: Set<string> }> {
  const rows = new Map<string, { from: string; codes: Set<string> }>();
  for (const line of PAGE.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const name = /^`(\w+Error)`$/.exec(cells[1] ?? '')?.[1];
    if (name === undefined || cells.length < 5) continue;
    rows.set(name, { from: cells[2]!.replace(/`/g, ''), codes: new Set([...cells[3]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!)) });
  }
  return rows;
}

/** Every `new Name('code'` (or `new Name<...>('code'`) in src/. */
function codesPassed(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith('.ts')) {
        for (const m of readFileSync(path, 'utf8').matchAll(/new (\w+Error)(?:<[^>(]*>)?\(\s*'([a-z_]+)'/g)) {
          (found.get(m[1]!) ?? found.set(m[1]!, new Set()).get(m[1]!)!).add(m[2]!);
        }
      }
    }
  };
  walk(join(ROOT, 'src'));
  return found;
}

function isMnemoError(api: PublicApi, symbol: ts.Symbol): boolean {
  if (!(symbol.flags & ts.SymbolFlags.Class)) return false;
  for (let type: ts.Type | undefined = api.checker.getDeclaredTypeOfSymbol(symbol); type !== undefined; ) {
    if (type.getSymbol()?.name === 'MnemoError') return true;
    type = api.checker.getBaseTypes(type as ts.InterfaceType)[0];
  }
  return false;
}

let api: PublicApi;
beforeAll(() => {
  api = publicApi();
}, 120_000);

describe('docs/reference/errors.md', () => {
  it('lists every exported error class, from its entry point, with every code it can carry', () => {
    const rows = documented();
    const passed = codesPassed();
    const problems: string[] = [];
    const exported = new Set<string>();
    for (const [entry, symbols] of api.exports) {
      for (const symbol of symbols) {
        if (!isMnemoError(api, symbol) || symbol.name === 'MnemoError' || exported.has(symbol.name)) continue;
        exported.add(symbol.name);
        const row = rows.get(symbol.name);
        if (row === undefined) {
          problems.push(`${symbol.name} (${entry}) has no row`);
          continue;
        }
        const code = api.checker.getDeclaredTypeOfSymbol(symbol).getProperty('code');
        const codeType = code === undefined ? undefined : api.checker.getTypeOfSymbol(code);
        // A generic code (InvalidInputError<C>) is whatever its call sites pass; else its type says.
        const generic = codeType !== undefined && (codeType.flags & ts.TypeFlags.TypeParameter) !== 0;
        const codes = new Set([...(codeType === undefined ? [] : literalsOf(api.checker, codeType)), ...(generic ? (passed.get(symbol.name) ?? []) : [])]);
        if (codes.size === 0) problems.push(`${symbol.name}: no code found in the source`);
        for (const c of codes) if (!row.codes.has(c)) problems.push(`${symbol.name}: code ${c} missing`);
      }
    }
    // A class exported from several entries is documented once, from the first that has it.
    for (const name of rows.keys()) if (!exported.has(name) && name !== 'ConfigError') problems.push(`${name} is documented but no entry point exports it`);
    expect(problems).toEqual([]);
    expect(exported.size).toBeGreaterThan(20);
  });

  it('says where each class comes from: an entry point that exports it', () => {
    const wrong: string[] = [];
    for (const [name, row] of documented()) {
      if (name === 'ConfigError') continue; // the command's own, not a library export
      if (!api.exports.get(row.from)?.some((s) => s.name === name)) wrong.push(`${name}: not exported by ${row.from}`);
    }
    expect(wrong).toEqual([]);
  });
});
