import findMyWay, { type HTTPMethod } from 'find-my-way';
import type { FastifyInstance } from 'fastify';
import './route-config.js';

// OPTIONS is left out: the CORS plugin answers it on every path, which says nothing about the resource.
const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'];
const ALWAYS = (): boolean => true;

interface RouteStore {
  exists: () => boolean;
}

/**
 * A shadow of the server's routes, so that a request that matched nothing can be told apart:
 * 405 with `Allow` when the path exists for another method, 404 otherwise (docs/api.md#conventions).
 * Must be attached before any route is registered.
 */
export class RouteTable {
  private readonly router = findMyWay({ ignoreTrailingSlash: false });

  attach(server: FastifyInstance): void {
    server.addHook('onRoute', (route) => {
      // A catch-all such as the disk mount (`GET /*`) opts out, or every unknown path would be a 405.
      const allowHeader = route.config?.allowHeader ?? true;
      if (allowHeader === false) return;
      const exists = allowHeader === true ? ALWAYS : allowHeader;
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        if (METHODS.includes(method as HTTPMethod)) this.addRoute(method as HTTPMethod, route.url, exists);
      }
    });
  }

  private addRoute(method: HTTPMethod, url: string, exists: () => boolean): void {
    try {
      this.router.on(method, url, () => undefined, { exists });
    } catch {
      // Duplicate shapes (e.g. the HEAD twin fastify adds for GET) are already known.
    }
  }

  /** Methods other than `method` under which `path` would match a route. */
  allowedMethods(method: string, path: string): string[] {
    return METHODS.filter((other) => {
      if (other === method) return false;
      const found = this.router.find(other, path);
      return found !== null && (found.store as RouteStore).exists();
    });
  }
}
