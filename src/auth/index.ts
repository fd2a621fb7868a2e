export { createAuth, type Auth, type AuthDeps } from './create-auth.js';
export type { Guard } from './guard.js';
