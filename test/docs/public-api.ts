/**
 * The package's public surface as the TypeScript checker sees it, for the reference tests: the
 * entry points of package.json's `exports` (mapped back to their sources), the classes they
 * export, and the property names of an exported interface. One program for all of them, made
 * once per test file.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { ROOT } from './docs-pages.ts';

/** `mnemo`, `mnemo/otp`, ... → the source file each entry's types come from. */
export function entryPoints(): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { import?: { types?: string } }>;
  };
  const entries = new Map<string, string>();
  for (const [key, value] of Object.entries(pkg.exports)) {
    const types = typeof value === 'object' ? value.import?.types : undefined;
    if (types === undefined) continue;
    const source = types.replace(/^\.\/dist\/esm\//, '').replace(/\.d\.ts$/, '.ts');
    entries.set(key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`, join(ROOT, source));
  }
  return entries;
}

export interface PublicApi {
  checker: ts.TypeChecker;
  /** Every exported symbol of every entry point, by entry (aliases resolved). */
  exports: Map<string, ts.Symbol[]>;
}

export function publicApi(): PublicApi {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const entries = entryPoints();
  const program = ts.createProgram([...entries.values()], parsed.options);
  const checker = program.getTypeChecker();
  const exports = new Map<string, ts.Symbol[]>();
  for (const [entry, file] of entries) {
    const source = program.getSourceFile(file);
    if (source === undefined) throw new Error(`${entry}: ${file} is not in the program`);
    const module = checker.getSymbolAtLocation(source)!;
    exports.set(
      entry,
      checker.getExportsOfModule(module).map((s) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s)),
    );
  }
  return { checker, exports };
}

/** The string literals a type can be (a union, a literal, a type parameter's default or constraint). */
export function literalsOf(checker: ts.TypeChecker, type: ts.Type): string[] {
  if (type.isStringLiteral()) return [type.value];
  if (type.isUnion()) return type.types.flatMap((t) => literalsOf(checker, t));
  if (type.flags & ts.TypeFlags.TypeParameter) {
    const param = type as ts.TypeParameter;
    const fallback = checker.getDefaultFromTypeParameter(param) ?? checker.getBaseConstraintOfType(param);
    return fallback === undefined ? [] : literalsOf(checker, fallback);
  }
  return [];
}

/** The names of an interface's (or type alias's) properties, own and inherited. */
export function propertyNames(api: PublicApi, entry: string, name: string): string[] {
  const symbol = api.exports.get(entry)?.find((s) => s.name === name);
  if (symbol === undefined) throw new Error(`${entry} exports no ${name}`);
  return api.checker.getDeclaredTypeOfSymbol(symbol).getApparentProperties().map((p) => p.name);
}
