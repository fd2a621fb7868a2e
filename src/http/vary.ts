import type { FastifyReply } from 'fastify';

/**
 * Adds `fields` (e.g. `Accept-Encoding`) to the reply's `Vary` header, keeping what another part of
 * the server (CORS, compression) already put there: caches need all of them.
 */
export function addVary(reply: FastifyReply, fields: string): void {
  const current = reply.getHeader('vary');
  if (current === undefined || current === '') {
    void reply.header('vary', fields);
    return;
  }
  const present = new Set(
    String(current)
      .split(',')
      .map((field) => field.trim().toLowerCase()),
  );
  const missing = fields.split(',').filter((field) => !present.has(field.trim().toLowerCase()));
  if (missing.length > 0)
    void reply.header('vary', `${String(current)}, ${missing.map((f) => f.trim()).join(', ')}`);
}
