export { DEFAULT_DASHBOARD_DIR, loadDashboardAssets, type DashboardAssets } from './assets.js';
export { DASHBOARD_PREFIX, registerDashboardRoutes } from './routes.js';
export { DASHBOARD_DOCS } from './contract.js';
