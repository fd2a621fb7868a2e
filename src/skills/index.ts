export { SkillsService, emptySkills, type SkillsDeps } from './skills.js';
export { registerSkillsRoutes } from './routes.js';
export { UNKNOWN_VERSION } from './parse-skills.js';
export { SKILLS_DOCS, type Skills } from './contract.js';
