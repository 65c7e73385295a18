import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Application, LogLevel } from 'typedoc';
import { describe, expect, it } from 'vitest';

// `npm run docs` cannot rot: TypeDoc converts the public entries with the repo's typedoc.json
// (strict: `validation.notDocumented`, `treatWarningsAsErrors`) and validates them, and every
// warning fails the test, listed: an export without a doc comment, a type a public signature
// uses that no entry exports, a broken `{@link}`. Nothing is rendered (`emit: 'none'`), and the
// TypeScript diagnostics are `tsc --noEmit`'s job (`skipErrorChecking`), so it costs only the
// conversion.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONFIG = join(ROOT, 'typedoc.json');

/** The source of each public entry of package.json's `exports`, as typedoc.json must list it. */
function exportedSources(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
  return Object.entries(pkg.exports)
    .filter(([subpath]) => subpath !== './package.json')
    .map(([subpath, target]) => {
      const types = (target as { import?: { types?: string } }).import?.types;
      const match = types === undefined ? null : /^\.\/dist\/esm\/(src\/.+)\.d\.ts$/.exec(types);
      if (match === null) throw new Error(`exports[${subpath}]: no ./dist/esm/src/... import types (${String(types)})`);
      return `${match[1]}.ts`;
    })
    .sort();
}

describe('the API reference (TypeDoc)', () => {
  it('covers every public entry of package.json', () => {
    const config = JSON.parse(readFileSync(CONFIG, 'utf8')) as { entryPoints: string[]; out: string };
    expect([...config.entryPoints].sort()).toEqual(exportedSources());
    expect(config.out).toBe('docs/api');
  });

  it('converts and validates with no warning: every export documented, every used type exported, every link resolved', async () => {
    const app = await Application.bootstrapWithPlugins({ options: CONFIG, emit: 'none', skipErrorChecking: true });
    const reported: string[] = [];
    const log = app.logger.log.bind(app.logger);
    app.logger.log = (message: string, level: LogLevel) => {
      if (level >= LogLevel.Warn) reported.push(`${LogLevel[level]}: ${message.replace(/\u001b\[[0-9;]*m/g, '')}`);
      log(message, level);
    };
    expect(app.options.getValue('validation')).toMatchObject({ notDocumented: true, notExported: true, invalidLink: true });
    expect(app.options.getValue('treatWarningsAsErrors')).toBe(true);
    const project = await app.convert();
    expect(project, reported.join('\n')).toBeDefined();
    app.validate(project!);
    expect(reported, `TypeDoc reported ${reported.length}:\n${reported.join('\n')}`).toEqual([]);
  }, 120_000);
});
