import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

/** The explorer's own files (`web/explore/` at the package's root: the same path from `src/` and from `dist/`). */
const PAGE_DIR = fileURLToPath(new URL('../../../web/explore/', import.meta.url));
/** MapLibre GL's browser build, served from the installed package (no CDN). */
const MAPLIBRE_DIR = dirname(createRequire(import.meta.url).resolve('maplibre-gl/dist/maplibre-gl.js'));

/** Each asset of the page: its path under /explore, file and media type. */
const ASSETS: { path: string; file: string; type: string }[] = [
  { path: '/explore', file: join(PAGE_DIR, 'index.html'), type: 'text/html; charset=utf-8' },
  { path: '/explore/explorer.js', file: join(PAGE_DIR, 'explorer.js'), type: 'text/javascript; charset=utf-8' },
  { path: '/explore/explorer.css', file: join(PAGE_DIR, 'explorer.css'), type: 'text/css; charset=utf-8' },
  { path: '/explore/maplibre-gl.js', file: join(MAPLIBRE_DIR, 'maplibre-gl.js'), type: 'text/javascript; charset=utf-8' },
  { path: '/explore/maplibre-gl.css', file: join(MAPLIBRE_DIR, 'maplibre-gl.css'), type: 'text/css; charset=utf-8' },
];

/**
 * The page's Content-Security-Policy: every request stays on the service's own origin (MapLibre's worker
 * starts from a blob: URL; the map draws on a canvas). A listing's photos, on the upstream site, are not shown.
 */
const CSP =
  "default-src 'self'; script-src 'self'; worker-src blob:; child-src blob:; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/**
 * GET /explore: the map explorer, a page for people over the same API (docs/explorer.md). Its files are
 * read once, at the first request for each; the page and its assets are public, the API calls it makes
 * carry the publishable key the person gives it.
 */
export function registerExploreRoutes(app: FastifyInstance): void {
  for (const asset of ASSETS) {
    let body: Buffer | null = null;
    app.get(asset.path, { config: { access: 'public' }, schema: { hide: true } }, async (_request, reply) => {
      body ??= readFileSync(asset.file);
      return reply
        .type(asset.type)
        .header('Content-Security-Policy', CSP)
        .header('X-Content-Type-Options', 'nosniff')
        .header('Cache-Control', 'no-cache')
        .send(body);
    });
  }
}
