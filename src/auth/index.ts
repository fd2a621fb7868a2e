export { createAuth, type Auth, type AuthDeps } from './create-auth.js';
export type { Guard } from './guard.js';
export { LoginThrottle, type LoginThrottleOptions } from './login-throttle.js';
export { FailureDelay } from './failure-delay.js';
export { AUTH_DOCS } from './contract.js';
