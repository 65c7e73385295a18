/**
 * The public surface's targets, read from the sources: the root entry stays small (what an
 * application starts with: `startRuntime`, agents, recall, errors; the rest under subpaths) and
 * every public type is camelCase. snake_case is kept only in formats defined elsewhere and
 * documented as such (docs/README.md, Vocabulary): the OpenAI chat-completions message shape
 * (src/message.ts, the LLM response in src/llm/llm-service.ts) and the Demo's HTTP bodies
 * (src/recall/demo-shapes.ts).
 */
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as root from '../../src/index.ts';
import { publicApi } from '../docs/public-api.ts';

const SRC = join(import.meta.dirname, '../../src');

/** snake_case properties of formats Mnemo does not own, by file: each documented. */
const KEPT_FORMATS: Record<string, readonly string[] | 'all'> = {
  'message.ts': ['tool_calls', 'tool_call_id', 'content_blocks', 'message_id'],
  'llm/llm-service.ts': ['tool_calls', 'content_blocks', 'finish_reason', 'prompt_tokens', 'completion_tokens', 'total_tokens'],
  'recall/demo-shapes.ts': 'all',
};

describe('the root entry', () => {
  it('exports at most 60 values', () => {
    expect(Object.keys(root).length).toBeLessThanOrEqual(60);
  });

  it('exports no runtime primitive or internal (they live under mnemo/otp or nowhere)', () => {
    const names = Object.keys(root);
    for (const internal of ['start', 'stop', 'exit', 'send', 'RECALL_DB_NAMES', 'SUMMARY_INSTRUCTION', 'splitPending', 'UNTITLED']) {
      expect(names).not.toContain(internal);
    }
  });
});

describe('public types', () => {
  it('of every entry of `exports` name their properties in camelCase, but for the documented formats', () => {
    const { checker, exports } = publicApi();
    const fileOf = (sym: ts.Symbol): string | undefined => {
      const name = sym.declarations?.[0]?.getSourceFile().fileName;
      return name !== undefined && name.startsWith(SRC) ? name.slice(SRC.length + 1) : undefined;
    };
    const found = new Set<string>();
    const seen = new Set<ts.Type>();
    const walk = (type: ts.Type, depth: number): void => {
      if (depth > 6 || seen.has(type)) return;
      seen.add(type);
      if (type.isUnionOrIntersection()) {
        for (const t of type.types) walk(t, depth);
        return;
      }
      const own = type.aliasSymbol ?? type.getSymbol();
      if (own !== undefined && fileOf(own) === undefined && own.name !== '__type' && own.name !== '__object') {
        // Another package's type (Array, Promise, Map, xstate's): only its type arguments are ours.
        for (const arg of checker.getTypeArguments(type as ts.TypeReference) ?? []) walk(arg, depth);
        return;
      }
      for (const prop of type.getProperties()) {
        const file = fileOf(prop);
        if (file === undefined) continue;
        const kept = KEPT_FORMATS[file];
        if (/[a-z0-9]_[a-z]/.test(prop.name) && kept !== 'all' && !kept?.includes(prop.name)) found.add(`${file}: ${prop.name}`);
        const decl = prop.valueDeclaration ?? prop.declarations?.[0];
        if (decl !== undefined) walk(checker.getTypeOfSymbolAtLocation(prop, decl), depth + 1);
      }
    };
    for (const symbols of exports.values()) {
      for (const sym of symbols) {
        if (sym.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Class)) walk(checker.getDeclaredTypeOfSymbol(sym), 0);
        if (sym.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Variable) && sym.valueDeclaration !== undefined) {
          const type = checker.getTypeOfSymbolAtLocation(sym, sym.valueDeclaration);
          walk(type, 0);
          for (const signature of type.getCallSignatures()) {
            walk(signature.getReturnType(), 0);
            for (const param of signature.getParameters()) walk(checker.getTypeOfSymbolAtLocation(param, sym.valueDeclaration), 0);
          }
        }
      }
    }
    expect([...found].sort()).toEqual([]);
  }, 120_000);
});
