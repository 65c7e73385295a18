/**
 * Where this copy of Mnemo's files is: the one module that reads `import.meta`, for the
 * TypeScript sources and the compiled build alike (dist/esm; the CommonJS entry points in
 * dist/cjs load that same build, so there is no second copy to locate).
 *
 * - `packageFile(rel)`: a file of this build by its path from src/ (`recall/search/search-worker`),
 *   with the build's extension (`.ts` from sources, `.js` from dist).
 * - `publicDir`: the chat page's static files (src/server/public, copied to dist/esm).
 * - `requireHere`: a `require` that resolves from Mnemo's own node_modules.
 * - `fromSources`: true when running the TypeScript sources (under tsx or vitest).
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here: string = import.meta.url;

export const fromSources: boolean = here.endsWith('.ts');

export function packageFile(rel: string): URL {
  return new URL(`./${rel}${fromSources ? '.ts' : '.js'}`, here);
}

export const publicDir: string = fileURLToPath(new URL('./server/public', here));

export const requireHere: NodeJS.Require = createRequire(here);
