import type { FastifyInstance } from 'fastify';
import type { Http01Publisher } from './acme-client.js';

/**
 * The key authorizations of the HTTP-01 challenges under way, answered at
 * `/.well-known/acme-challenge/<token>` (RFC 8555 §8.3). The route is always there (a reload may
 * turn `tls.auto` on later) and answers 404 for a token that is not pending.
 */
export class ChallengeResponder implements Http01Publisher {
  private readonly pending = new Map<string, string>();

  publish(token: string, keyAuthorization: string): void {
    this.pending.set(token, keyAuthorization);
  }

  withdraw(token: string): void {
    this.pending.delete(token);
  }

  register(server: FastifyInstance): void {
    server.get<{ Params: { token: string } }>('/.well-known/acme-challenge/:token', (request, reply) => {
      const answer = this.pending.get(request.params.token);
      if (answer === undefined) {
        return reply.code(404).type('text/plain; charset=utf-8').send('no such ACME challenge\n');
      }
      return reply.type('text/plain; charset=utf-8').send(answer);
    });
  }
}
