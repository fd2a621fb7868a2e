export { createAuth, type Auth, type AuthDeps, type FailingKeys } from './create-auth.js';
export type { Guard } from './guard.js';
export { LoginThrottle, loginThrottleKeys, type LoginThrottleOptions } from './login-throttle.js';
export { PasswordCheck } from './credentials.js';
export { readLoginForm } from './login-body.js';
export { FailureDelay } from './failure-delay.js';
export { AUTH_DOCS } from './contract.js';
