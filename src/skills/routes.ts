import type { FastifyInstance } from 'fastify';
import type { SkillsService } from './skills.js';

/** `GET /api/v3/skills` and `GET /api/v3/skills/reload` (runs the binary again, then answers). */
export function registerSkillsRoutes(v3: FastifyInstance, skills: SkillsService): void {
  v3.get('/skills', () => skills.settled());
  v3.get('/skills/reload', () => skills.reload());
}
