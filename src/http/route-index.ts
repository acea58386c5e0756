import FindMyWay from 'find-my-way';
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { TSchema } from 'typebox';
import type { Plan } from '../config.js';
import type { Access } from './plugins/auth.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route of the app and the methods of each path (set by the app before any route). */
    routeIndex: RouteIndex;
  }
}

/** One route as the router holds it: who may call it, the lowest plan it serves, whether the OpenAPI document shows it. */
export interface KnownRoute {
  method: string;
  /** Fastify's form (`/v1/areas/:id`). */
  url: string;
  access: Access;
  minPlan: Plan | undefined;
  /** Left out of the OpenAPI document (`schema.hide`). */
  hidden: boolean;
  /** The route's own schema parts (TypeBox, so JSON Schema): what other interfaces (the MCP tools) derive from. */
  operationId?: string;
  summary?: string;
  description?: string;
  params?: TSchema;
  querystring?: TSchema;
}

/**
 * Which methods each path of the app answers, matched by the same router library Fastify uses, so
 * that a request for a known path with another method is told 405 and `Allow` instead of 404; and
 * every route with its access rule, for the OpenAPI document and the test that holds the two together.
 * Fill it from Fastify's `onRoute` hook before any route is registered.
 */
export class RouteIndex {
  private readonly router = FindMyWay({ maxParamLength: 10_000 });
  private readonly byUrl = new Map<string, Set<string>>();
  // The route objects themselves: a plugin's own onRoute hook may still set `config.access` after ours ran.
  private readonly registered: RouteOptions[] = [];

  /** Starts recording every route `app` registers from now on. */
  watch(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      // A catch-all route (CORS preflights) says nothing about which paths exist.
      if (route.url === '*' || route.url === '/*') return;
      this.registered.push(route);
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

  /** Every route registered, one entry a method, with its access rule as the auth hook reads it (no rule: `key`). */
  routes(): KnownRoute[] {
    return this.registered.flatMap((route) =>
      (Array.isArray(route.method) ? route.method : [route.method]).map((method) => ({
        method: method.toUpperCase(),
        url: route.url,
        access: route.config?.access ?? 'key',
        minPlan: route.config?.minPlan,
        hidden: Boolean((route.schema as { hide?: boolean } | undefined)?.hide),
        ...(route.schema as
          | { operationId?: string; summary?: string; description?: string; params?: TSchema; querystring?: TSchema }
          | undefined),
      })),
    );
  }
}
