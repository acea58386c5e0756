import FindMyWay from 'find-my-way';
import type { FastifyInstance } from 'fastify';

/**
 * Which methods each path of the app answers, matched by the same router library Fastify uses, so
 * that a request for a known path with another method is told 405 and `Allow` instead of 404.
 * Fill it from Fastify's `onRoute` hook before any route is registered.
 */
export class RouteIndex {
  private readonly router = FindMyWay({ maxParamLength: 10_000 });
  private readonly byUrl = new Map<string, Set<string>>();

  /** Starts recording every route `app` registers from now on. */
  watch(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      // A catch-all route (CORS preflights) says nothing about which paths exist.
      if (route.url === '*' || route.url === '/*') return;
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      let known = this.byUrl.get(route.url);
      if (!known) {
        known = new Set();
        this.byUrl.set(route.url, known);
        this.router.on('GET', route.url, () => undefined, known);
      }
      for (const method of methods) known.add(method.toUpperCase());
      if (known.has('GET')) known.add('HEAD');
    });
  }

  /** The methods `path` (no query) answers, sorted; empty when no route has that path. */
  methodsFor(path: string): string[] {
    const match = this.router.find('GET', path);
    return match ? [...(match.store as Set<string>)].sort() : [];
  }
}
