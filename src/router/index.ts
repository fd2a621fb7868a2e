/** router: what `router.*` serves besides the server's own routes (the UI build, directories, redirects). */
export { Router, RouterConfigError, ROUTER_KEYS } from './router.js';
export { UI_PREFIX } from './route-table.js';
