/**
 * The route `config` keys the server's own hooks read: declared once, so a route sets them with
 * types and a hook reads them without a cast.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `false`: a catch-all that says nothing about which methods a path has (route-table.ts); a
     * function: the route exists only while it answers true (the login routes with auth on).
     */
    allowHeader?: boolean | (() => boolean);
    /** `true`: answered without the `/api/v3` guard (the OpenAPI document; it holds no secrets). */
    public?: boolean;
  }
}

export {};
