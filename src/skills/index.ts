export { SkillsService, emptySkills, type Skills, type SkillsDeps } from './skills.js';
export { registerSkillsRoutes, SkillsSchema } from './routes.js';
export { UNKNOWN_VERSION } from './parse-skills.js';
