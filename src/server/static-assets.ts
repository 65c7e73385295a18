/**
 * The chat page's files, served from a fixed allow-list: each route maps to one file chosen
 * here, read once when the server is built. No part of a request's path is ever joined to a
 * file-system path, so there is nothing to traverse. The markdown renderer, the sanitizer and
 * the code highlighter come from our own node_modules (marked, DOMPurify, highlight.js's
 * prebuilt ES module with its common languages), never from a CDN: the page works offline.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { publicDir, requireHere } from '../module-location.ts';

export interface StaticAsset {
  route: string;
  contentType: string;
  body: Buffer;
}


const JS = 'text/javascript; charset=utf-8';

/** The routes and the files behind them. */
export function loadStaticAssets(): StaticAsset[] {
  const entries: [route: string, file: string, contentType: string][] = [
    ['/', join(publicDir, 'index.html'), 'text/html; charset=utf-8'],
    ['/static/app.js', join(publicDir, 'app.js'), JS],
    ['/static/i18n.js', join(publicDir, 'i18n.js'), JS],
    ['/static/app.css', join(publicDir, 'app.css'), 'text/css; charset=utf-8'],
    ['/static/favicon.svg', join(publicDir, 'favicon.svg'), 'image/svg+xml'],
    // marked's "." export is its ESM build; DOMPurify's ESM build sits beside its CJS entry.
    ['/static/vendor/marked.esm.js', requireHere.resolve('marked'), JS],
    ['/static/vendor/purify.es.mjs', join(dirname(requireHere.resolve('dompurify')), 'purify.es.mjs'), JS],
    // highlight.js's own prebuilt ES module (core and its ~35 common languages), one file.
    ['/static/vendor/highlight.min.js', join(dirname(requireHere.resolve('@highlightjs/cdn-assets/package.json')), 'es', 'highlight.min.js'), JS],
  ];
  return entries.map(([route, file, contentType]) => ({
    route,
    contentType,
    body: stripSourceMapComment(readFileSync(file), contentType),
  }));
}

/** The vendor builds point at `.map` files we do not serve; drop the dangling reference. */
function stripSourceMapComment(body: Buffer, contentType: string): Buffer {
  if (contentType !== JS) return body;
  return Buffer.from(body.toString('utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'), 'utf8');
}

export function registerStaticAssets(app: FastifyInstance, assets: readonly StaticAsset[]): void {
  for (const asset of assets) {
    // Public: the page and its assets hold no data, so a browser can load them and then ask
    // its user for a token.
    app.get(asset.route, { config: { access: 'public' } }, async (_request, reply) =>
      reply
        .header('content-type', asset.contentType)
        .header('cache-control', 'no-cache')
        .send(asset.body),
    );
  }
}
